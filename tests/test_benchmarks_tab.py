"""The Benchmarks tab drives real child processes: a good run, a crash, a cancel; the tab survives all."""

from __future__ import annotations

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from hwbench_gui.engine.run import registry
from hwbench_gui.ui.context import AppContext

# the tab's column index by header name (imported lazily: the fixture sets up the registry first)
STATUS, VALUE, FIGURE = "Status", "Value", "Figure"


def _col(name):
    from hwbench_gui.ui.benchmarks.results_table import COLUMN

    return COLUMN[name]


@pytest.fixture
def tab(qtbot, qsettings, tmp_path, fixture_benchmarks):
    from hwbench_gui.ui.benchmarks import BenchmarksTab

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    widget = BenchmarksTab(context)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.shutdown()
    context.workers.shutdown(timeout_s=10)


def _wait_idle(qtbot, tab, timeout=30000):
    qtbot.waitUntil(lambda: not tab.is_running() and not tab.queue.pending(), timeout=timeout)


BUSY = " · busy machine"


def _status(text: str) -> str:
    """A row's status without the busy note: a loaded test box may add it to any run (its own test pins it)."""
    return text[:-len(BUSY)] if text.endswith(BUSY) else text


def _last_row(tab):
    row = tab.results.rowCount() - 1
    return [tab.results.item(row, c).text() for c in range(tab.results.columnCount())]


def test_catalogue_shows_availability_and_reasons(tab):
    tab.select("test.self_unavailable")
    assert not tab.run_button.isEnabled()
    assert "fixture availability says no" in tab.title.text()
    tab.select("test.ok")
    assert tab.run_button.isEnabled()
    # the form is generated from the declaration
    assert {"samples", "scale"} <= set(tab.form().values())


def test_run_from_the_form_writes_a_result_and_plots(qtbot, tab):
    tab.select("test.ok")
    tab.form().editor("scale").setValue(2.0)
    qtbot.mouseClick(tab.run_button, Qt.LeftButton)
    _wait_idle(qtbot, tab)
    row = _last_row(tab)
    assert row[1] == "test.ok" and _status(row[_col(STATUS)]) == "ok"
    assert row[_col(VALUE)].startswith("11 ")  # median of 2..20
    assert row[_col(FIGURE)] == "value"  # the headline figure is named
    assert list((tab.context.results_dir).glob("*.json"))
    assert tab.progress.value() == 1000


def test_crash_is_a_failed_row_and_the_next_run_works(qtbot, tab):
    tab.enqueue("test.segfault", {})
    tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    _wait_idle(qtbot, tab)
    rows = [[tab.results.item(r, c).text() for c in range(tab.results.columnCount())]
            for r in range(tab.results.rowCount())]
    statuses = {row[1]: _status(row[_col(STATUS)]) for row in rows}
    assert statuses == {"test.segfault": "failed", "test.ok": "ok"}
    assert "SIGSEGV" in tab.run_status.text() or any("SIGSEGV" in r[_col(VALUE)] for r in rows)


def test_cancel_ends_the_child_and_records_cancelled(qtbot, tab):
    pids = []
    tab.queue.add_listener(lambda change: pids.append(change.event.get("pid"))
                           if change.kind == "event" and change.event.get("type") == "started" else None)
    tab.enqueue("test.slow", {})
    qtbot.waitUntil(lambda: tab.is_running(), timeout=5000)
    qtbot.wait(1500)
    qtbot.mouseClick(tab.cancel_button, Qt.LeftButton)
    _wait_idle(qtbot, tab, timeout=15000)
    # the machine running the tests may be busy: that is said after the status, never instead of it
    assert _status(_last_row(tab)[_col(STATUS)]) == "cancelled"
    for pid in filter(None, pids):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_seed_suite_preset_queues_the_runs_that_can_run_here(tab, monkeypatch):
    started = []
    monkeypatch.setattr(tab, "_start_next", lambda: started.append(True))
    queued = tab.enqueue_suite("seed")
    ids = [run.bench_id for run in tab.queue.pending()]
    assert queued == len(ids) > 0
    assert set(ids) <= {"model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet"}
    assert all(run.params["precision"] in ("fp32", "fp16-amp") for run in tab.queue.pending())
    assert tab.queue_list.count() == queued
    tab._clear_queue()


def test_a_suite_has_one_progress_bar_resumes_and_writes_its_report(qtbot, tab, monkeypatch):
    from hwbench_gui.engine.run import suites

    monkeypatch.setitem(suites.SUITES, "tiny", suites.Suite("tiny", "Tiny", "", axes={"scale": (1.0, 2.0)},
                                                            bench_axis=("test.ok",)))
    assert tab.enqueue_suite("tiny") == 2
    assert tab.suite_bar.isVisibleTo(tab) and tab.suite_bar.label.text().startswith("suite ")
    _wait_idle(qtbot, tab)
    qtbot.waitUntil(lambda: "suite tiny: report" in tab.log.toPlainText()
                    or "suite tiny: evaluation report" in tab.log.toPlainText(), timeout=30000)
    assert tab.suite_bar.bar.value() == 1000 and tab.suite_bar.label.text() == "suite done: 2 of 2 runs done"
    reports = [p for p in tab.context.results_dir.iterdir() if p.suffix in (".html", ".pdf")]
    assert reports and all(str(p) in tab.log.toPlainText() for p in reports)
    # resumed: both runs are in the results folder, nothing is queued again
    assert tab.enqueue_suite("tiny", resume=True) == 0
    assert "suite tiny: 2 runs: none to run, 2 already done" in tab.log.toPlainText()
    assert "  done before: test.ok 1.0" in tab.log.toPlainText()
    assert tab.queue.pending() == []
    # asked again: it is timed now (this machine ran it), and short, so nothing is asked before queuing
    asked = []
    assert tab.enqueue_suite("tiny", confirm=lambda text: asked.append(text) or False) == 2
    assert asked == [] and "suite tiny: 2 runs: 2 to run (about " in tab.log.toPlainText()
    tab._clear_queue()  # the first run goes on; the second will not run: the suite ends cancelled
    _wait_idle(qtbot, tab)
    qtbot.waitUntil(lambda: tab.suite_bar.progress is None, timeout=30000)
    assert tab.suite_bar.label.text() == "suite cancelled: 1 of 2 runs done"


def test_a_suite_of_unknown_length_is_queued_only_once_agreed(tab, monkeypatch):
    from hwbench_gui.engine.run import suites

    monkeypatch.setattr(tab, "_start_next", lambda: None)
    monkeypatch.setitem(suites.SUITES, "tiny", suites.Suite("tiny", "Tiny", "", axes={"scale": (1.0, 2.0)},
                                                            bench_axis=("test.ok",)))
    asked = []
    assert tab.enqueue_suite("tiny", confirm=lambda text: asked.append(text) or False) == 0
    assert asked == ["suite tiny: 2 runs: 2 to run (time unknown: never run on this machine or one like it)."
                     "\n\nQueue it?"] and tab.queue.pending() == []
    assert tab.enqueue_suite("tiny", confirm=lambda text: True) == 2
    tab._clear_queue()


# --- forms of every benchmark, live plot, log, unwritable results folder ---------------------------

def test_every_registered_benchmark_form_builds_and_round_trips(qtbot):
    """gpu.pcie's min_bytes (max 2^34) raised OverflowError in a QSpinBox; every form must build and
    hand back values that resolve to the declared defaults."""
    from hwbench_gui.ui.param_form import ParamForm

    for bench in registry.all_benchmarks():
        form = ParamForm(bench.params)
        qtbot.addWidget(form)
        resolved = bench.resolve_params(form.values())
        defaults = bench.resolve_params({})
        for param in bench.params:
            if param.default is None or param.kind == "path":
                continue
            expected = param.parse(defaults[param.name]) if param.kind == "device" else defaults[param.name]
            assert resolved[param.name] == expected, (bench.id, param.name)


def test_byte_sizes_take_units_and_the_full_range(qtbot):
    from hwbench_gui.engine.spec.benchmark import ParamError
    from hwbench_gui.ui.param_form import ParamForm, SizeEdit, human_label

    bench = registry.get("gpu.pcie")
    form = ParamForm(bench.params)
    qtbot.addWidget(form)
    editor = form.editor("min_bytes")
    assert isinstance(editor, SizeEdit)
    assert editor.text() == "4 KiB"
    editor.setText("64 MiB")
    assert bench.resolve_params(form.values())["min_bytes"] == 64 * 2**20
    editor.setText("16G")  # the declared maximum, 2^34: beyond any QSpinBox
    assert bench.resolve_params(form.values())["min_bytes"] == 2**34
    assert editor.problem is None
    editor.setText("17G")
    assert "above the maximum" in editor.problem
    with pytest.raises(ParamError):
        bench.resolve_params(form.values())
    editor.setText("lots")
    with pytest.raises(ParamError):
        bench.resolve_params(form.values())
    assert human_label(bench.param("min_bytes")) == "Min bytes"
    assert human_label(registry.get("disk.read").param("file_size_mib")) == "File size (MiB)"


def test_a_form_that_fails_to_build_clears_the_previous_one(tab, monkeypatch):
    import hwbench_gui.ui.benchmarks.run_panel as module

    tab.select("test.ok")
    assert tab.form() is not None

    class Broken:
        def __init__(self, params, **_options):
            raise OverflowError("int too big to convert")

    monkeypatch.setattr(module, "ParamForm", Broken)
    tab.select("test.raises")
    assert tab.form() is None
    assert not tab.run_button.isEnabled()
    assert "OverflowError" in tab.form_area.widget().text()
    tab.enqueue_current()  # Run with no form: nothing is queued with the old form's values
    assert not tab.queue.pending() and not tab.is_running()


def test_live_plot_resets_per_run_and_plots_against_the_sweep_variable(tab):
    from hwbench_gui.engine.run.queue import QueuedRun

    tab._on_started(QueuedRun(1, "test.ok", {}))
    for threads, value in ((1, 5.0), (2, 9.0), (4, 15.0)):
        tab._on_event({"type": "metric", "name": "bandwidth", "value": value, "unit": "GB/s", "threads": threads})
    title = tab.plot.getPlotItem().titleLabel.text
    assert title == f"{registry.get('test.ok').title} (live)"
    assert tab.plot.getAxis("bottom").labelText == "threads"
    assert tab.x_axis.integer
    x, y = tab.plot.getPlotItem().listDataItems()[0].getData()
    assert list(x) == [1.0, 2.0, 4.0] and list(y) == [5.0, 9.0, 15.0]
    ticks = [v for _spacing, values in tab.x_axis.tickValues(0.5, 3.5, 400) for v in values]
    assert ticks and all(float(v).is_integer() for v in ticks)

    tab._on_started(QueuedRun(2, "test.raises", {}))
    assert tab.plot.getPlotItem().titleLabel.text == f"{registry.get('test.raises').title} (live)"
    assert tab.plot.getPlotItem().listDataItems() == []
    assert tab.plot.getAxis("bottom").labelText == ""
    assert not tab.x_axis.integer
    # a metric without a sweep variable is placed at the seconds since the run started
    tab._on_event({"type": "metric", "name": "rate", "value": 3.0, "unit": "it/s"})
    assert tab.plot.getAxis("bottom").labelText == "elapsed (s)"


def test_elapsed_time_moves_on_between_events_and_the_log_streams(qtbot, tab):
    tab.enqueue("test.slow", {})
    qtbot.waitUntil(lambda: tab.is_running() and tab._elapsed_timer.isActive(), timeout=5000)
    clock, started = tab.clock, tab._run_started
    tab.clock = lambda: started + 42.4
    tab._elapsed_timer.timeout.emit()  # the timer's tick, with no event from the child in between
    assert "42 s elapsed" in tab.run_status.text()
    tab.clock = clock
    tab.cancel_current()
    _wait_idle(qtbot, tab, timeout=15000)
    assert not tab._elapsed_timer.isActive()

    tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    _wait_idle(qtbot, tab)
    text = tab.log.toPlainText()
    assert "all repeats done" in text  # the child's log event
    assert "a stray print from the benchmark" in text  # a plain line of the child
    assert "value: 2 units" in text  # a metric
    assert "repeat 3" in text  # a progress step
    assert "finished: ok" in text


def test_unwritable_results_folder_is_said_and_the_result_can_be_saved_elsewhere(qtbot, qsettings, tmp_path,
                                                                                    fixture_benchmarks):
    from hwbench_gui.ui.benchmarks import BenchmarksTab

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # a folder below a regular file cannot be made, even by root
    context = AppContext(settings=qsettings, results_dir=blocker / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    tab.show()
    try:
        tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
        qtbot.waitUntil(tab.folder_warning.isVisible, timeout=10000)  # probed on a worker thread
        assert "a-file" in tab.folder_warning.text()
        _wait_idle(qtbot, tab)
        assert "NOT SAVED" in tab.run_status.text()
        row = _last_row(tab)
        assert _status(row[_col(STATUS)]) == "ok (not saved)"
        qtbot.waitUntil(lambda: tab.selected_document() is not None, timeout=5000)  # a turn after the row
        document = tab.selected_document()
        assert document is not None and document["status"] == "ok"
        assert tab.save_as_button.isEnabled()
        written = tab.save_document_as(document, tmp_path / "saved.json")
        assert written is not None and written.exists()
        assert _status(_last_row(tab)[_col(STATUS)]) == "ok"
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)


def test_model_benchmarks_say_when_tensorflow_will_see_no_gpu(tab, monkeypatch):
    import hwbench_gui.ui.tf_status as tf_status

    monkeypatch.setattr(tf_status, "tensorflow_gpu_note",
                        lambda software, gpu_reason:
                        "TensorFlow will see no GPU: its CUDA 12 libraries are not installed")
    bench = next((b for b in registry.all_benchmarks()
                  if any(p.name == "framework" and "tf" in p.choices for p in b.params)
                  and registry.availability(b) is None), None)
    if bench is None:
        pytest.skip("no model benchmark can run here")
    tab.select(bench.id)
    assert "TensorFlow will see no GPU" in tab.title.text()


def test_a_run_on_a_busy_machine_says_so_in_its_row(tab):
    from reports_data import make_doc

    doc = make_doc("t.rate", [10.0, 11.0, 12.0])
    doc["warnings"] = ["busy machine: other processes used 150 % of a CPU core (median) while it ran"]
    doc["telemetry"] = {"noise": {"busy": True, "reasons": ["other processes used 150 % of a CPU core"]}}
    tab._add_result_row(doc)
    status = tab.results.item(tab.results.rowCount() - 1, _col("Status"))
    assert status.text() == "ok · busy machine"
    assert "150 % of a CPU core" in status.toolTip()
    calm = make_doc("t.rate", [10.0, 11.0, 12.0])
    tab._add_result_row(calm)
    assert _status(tab.results.item(tab.results.rowCount() - 1, _col("Status")).text()) == "ok"


SIZE_TEXTS = [("64MiB", 64 * 2**20), ("64 MiB", 64 * 2**20), ("16G", 16 * 2**30), ("1e3", 1000), ("1 GB", 10**9)]


@pytest.mark.parametrize("text, expected", SIZE_TEXTS)
def test_the_form_and_the_cli_read_a_byte_size_alike(qtbot, text, expected):
    from hwbench_gui.commands.bench import parse_param_args
    from hwbench_gui.ui.param_form import ParamForm

    bench = registry.get("gpu.pcie")
    form = ParamForm(bench.params)
    qtbot.addWidget(form)
    form.editor("min_bytes").setText(text)
    assert form.values()["min_bytes"] == expected  # the form hands on the checked int, not its text
    cli = bench.resolve_params(parse_param_args([f"min_bytes={text}"]))
    assert cli["min_bytes"] == expected


@pytest.mark.parametrize("text", ["lots", "1.5 B", "17G", "0"])
def test_the_form_and_the_cli_refuse_a_bad_size_with_one_message(qtbot, text):
    from hwbench_gui.commands.bench import parse_param_args
    from hwbench_gui.engine.spec.benchmark import ParamError
    from hwbench_gui.ui.param_form import ParamForm

    bench = registry.get("gpu.pcie")
    form = ParamForm(bench.params)
    qtbot.addWidget(form)
    editor = form.editor("min_bytes")
    editor.setText(text)
    with pytest.raises(ParamError) as refused:
        bench.resolve_params(parse_param_args([f"min_bytes={text}"]))
    assert editor.problem == str(refused.value)
    assert editor.problem.startswith("min_bytes: ")


def test_the_tab_shows_and_commands_the_contexts_run_queue(tab):
    """The run queue is the context's model: a run queued there by anyone is listed by the tab, and the
    tab's Clear queue empties that same queue."""
    assert tab.queue is tab.context.run_queue
    tab.context.run_queue.add("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    assert tab.queue_list.count() == 1 and not tab.is_running()
    tab.clear_queue_button.click()
    assert tab.queue_list.count() == 0 and not tab.context.run_queue.pending()


def test_a_deleted_tab_leaves_the_contexts_queue_usable(qsettings, tmp_path, fixture_benchmarks):
    """The queue outlives the tab that showed it: once the tab is gone it tells nobody, and raises nothing."""
    from shiboken6 import delete

    from hwbench_gui.ui.benchmarks import BenchmarksTab

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    delete(BenchmarksTab(context))
    run = context.run_queue.add("test.ok", {})
    assert context.run_queue.pending() == [run]
    assert context.run_queue.clear() == [run]


def test_saved_results_are_read_off_the_gui_thread_and_sit_above_this_sessions_runs(qtbot, qsettings, tmp_path,
                                                                                    fixture_benchmarks, monkeypatch):
    """The results folder is read on a worker (hundreds of documents took 0.6 s of the click that opened
    the tab), its documents come in a few rows per turn, oldest first, a corrupt file is named in the log,
    and a run of this session lands below them."""
    import threading

    from reports_data import make_doc, write_bad_files, write_docs

    from hwbench_gui.engine.results import library
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.benchmarks import results_table as rt

    results = tmp_path / "results"
    write_docs(results, [make_doc("t.throughput", minutes=m) for m in (30, 10, 20, 0, 40)])
    write_bad_files(results)
    readers, real_list = [], library.list_results
    monkeypatch.setattr(library, "list_results",
                        lambda *a, **k: (readers.append(threading.current_thread()), real_list(*a, **k))[1])
    monkeypatch.setattr(rt, "SAVED_ROWS_PER_TURN", 2)
    rows_at_each_turn, real_next_turn = [], rt.next_turn
    monkeypatch.setattr(rt, "next_turn", lambda context, step: (
        rows_at_each_turn.append(tab.results.rowCount()), real_next_turn(context, step)))
    context = AppContext(settings=qsettings, results_dir=results)
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    assert tab.results.rowCount() == 0  # nothing read in the constructor: the tab comes up at once
    with qtbot.waitSignal(tab.results_table.saved_loaded, timeout=10000):
        pass
    assert rows_at_each_turn == [2, 4]  # two rows a turn, the fifth in a third turn
    assert readers and all(thread is not threading.main_thread() for thread in readers)
    started = [tab.results.item(r, _col("Started")).text() for r in range(tab.results.rowCount())]
    assert len(started) == 5 and started == sorted(started)
    assert "corrupt.json" in tab.log.toPlainText()
    tab.select("test.ok")
    tab.enqueue_current()
    _wait_idle(qtbot, tab)
    assert tab.results.rowCount() == 6 and _last_row(tab)[_col("Benchmark")] == "test.ok"
    tab.results.selectRow(5)
    assert tab.selected_document()["benchmark"]["id"] == "test.ok"
    tab.shutdown()
    context.workers.shutdown(timeout_s=10)


def test_a_finished_run_is_shown_over_several_turns(qtbot, tab):
    """The turn in which a run ends adds its row and nothing more; fitting the columns and selecting the
    row (which draws its document) each come in a later turn: done in one, they held the window 50-80 ms."""
    from PySide6.QtCore import QTimer

    seen = []

    def in_the_finished_turn(run):
        seen.append(("row", tab.results.rowCount(), tab.selected_document()))
        widths_before = [tab.results.columnWidth(c) for c in range(tab.results.columnCount())]
        QTimer.singleShot(0, lambda: seen.append(("next turn", tab.selected_document(), widths_before)))

    tab.runner.run_finished.connect(in_the_finished_turn)  # after the table's own slot
    tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    _wait_idle(qtbot, tab)
    qtbot.waitUntil(lambda: tab.selected_document() is not None, timeout=5000)
    assert seen[0][0] == "row" and seen[0][1] == 1 and seen[0][2] is None  # the row, not yet selected
    assert seen[1][0] == "next turn" and seen[1][1] is None  # the selection waits another turn
    assert tab.selected_document()["benchmark"]["id"] == "test.ok"
    assert tab.plot.getPlotItem().titleLabel.text  # the selection drew the document


def test_the_log_shows_the_benchmarks_lines_and_keeps_framework_output_behind_a_toggle(tab):
    tab._on_event({"type": "log", "message": "I tensorflow/core/util/port.cc:153] oneDNN custom operations are on.",
                   "stream": "stderr"})
    tab._on_event({"type": "log", "message": "warm-up done"})
    view = tab.run_panel.log_view
    assert "warm-up done" in tab.log.toPlainText() and "oneDNN" not in tab.log.toPlainText()
    assert "oneDNN" in view.framework_log.toPlainText() and not view.framework_log.isVisibleTo(view)
    assert view.framework_toggle.text().startswith("Show what the frameworks printed (1 line:")
    view.framework_toggle.setChecked(True)
    assert view.framework_log.isVisibleTo(view)


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_clear_queue_leaves_the_buttons_where_they_were(tab, monkeypatch, qtbot, size):
    """The queue list comes and goes with waiting runs; the buttons above must not move under the cursor."""
    monkeypatch.setattr(tab, "_start_next", lambda: None)
    tab.resize(*size)
    tab.select("test.ok")
    qtbot.wait(20)

    def button_y():
        QApplication.processEvents()
        return tab.clear_queue_button.mapTo(tab, tab.clear_queue_button.rect().topLeft()).y()

    before = button_y()
    tab.queue.add("test.ok", {})
    tab.queue.add("test.ok", {})
    assert tab.queue_list.count() == 2 and "2 waiting" in tab.run_panel.queue_label.text() and button_y() == before
    tab._clear_queue()
    assert tab.queue_list.count() == 0 and button_y() == before
