"""The Reports tab: library table, filter, import, delete with undo, comparison with charts, exports."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from reports_data import make_doc, on_other_machine, write_bad_files, write_docs

from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.results import describe, library
from hwbench_gui.ui.context import AppContext


@pytest.fixture
def tab(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports import ReportsTab

    results = tmp_path / "results"
    a = [make_doc("t.rate"), make_doc("t.latency", [10.0, 10.1, 9.9, 10.05, 9.95], unit="ms",
                                      higher_is_better=False)]
    write_docs(results, a)
    write_bad_files(results)
    incoming = tmp_path / "incoming"
    write_docs(incoming, [on_other_machine(a[0], "beta", "Test GPU B", 2.0),
                          on_other_machine(a[1], "beta", "Test GPU B", 0.5)])
    messages = []
    context = AppContext(settings=qsettings, results_dir=results,
                         show_status=lambda message, timeout_ms=0: messages.append(message))
    widget = ReportsTab(context)
    qtbot.addWidget(widget)
    assert widget.wait_loaded()
    widget.resize(1200, 800)
    widget.messages = messages
    widget.incoming = incoming
    yield widget
    widget.shutdown()


def measured(widget):
    """Documents from the results folder (the shipped reference folder also holds measured H200 runs)."""
    reference = str(library.reference_dir())
    return [d for d in widget.documents() if not str(d.get("_path", "")).startswith(reference)]


def test_lists_documents_and_reports_skipped_files(tab):
    assert len(measured(tab)) == 2
    assert any(d.get("provenance") == "published" for d in tab.documents())
    assert tab.model.columnCount() == 8
    text = tab.errors_label.text()
    assert "corrupt.json" in text and "newer.json" in text and "package.json" in text
    tab.reference_check.setChecked(False)
    assert len(tab.documents()) == 2


def test_filter_and_sort(tab):
    tab.set_filter("t.latency")
    assert [d["benchmark"]["id"] for d in tab.documents()] == ["t.latency"]
    tab.set_filter("")
    tab.reference_check.setChecked(False)
    tab.table.sortByColumn(2, __import__("PySide6.QtCore").QtCore.Qt.AscendingOrder)
    assert [d["benchmark"]["id"] for d in tab.documents()] == ["t.latency", "t.rate"]


def test_import_compare_two_machines_and_export(tab, tmp_path):
    report = tab.import_paths([tab.incoming])
    assert len(report.imported) == 2 and "Imported 2" in tab.messages[-1]
    tab.reference_check.setChecked(False)
    assert len(tab.documents()) == 4
    tab.compare_selected("machine")  # nothing selected: every machine shown
    comparison = tab.report.comparison
    assert len(comparison.sides) == 2
    beta = compare.find_side(comparison.sides, "beta")
    tab.baseline_combo.setCurrentIndex(1 - beta)  # alpha as the baseline
    comparison = tab.report.comparison
    assert comparison.summaries[beta].geomean == pytest.approx(2.0)
    assert tab.compare_table.rowCount() == 2 and tab.compare_table.columnCount() == 5
    assert len(tab.chart_labels()) >= 1 and not tab.chart_labels()[0].pixmap().isNull()
    assert tab.pages.currentIndex() == 1

    html = tab.export_html(tmp_path / "out.html")
    pdf = tab.export_pdf(tmp_path / "out.pdf")
    csv_path = tab.export_csv(tmp_path / "out.csv")
    assert "data:image/png;base64," in html.read_text(encoding="utf-8")
    assert pdf.read_bytes().startswith(b"%PDF")
    assert len(csv_path.read_text(encoding="utf-8").splitlines()) == 1 + 4


def test_compare_selected_runs_and_export_selection(tab, tmp_path):
    tab.reference_check.setChecked(False)
    tab.select_rows([0, 1])
    assert len(tab.selected_documents()) == 2
    tab.compare_selected("run")
    assert len(tab.report.comparison.sides) == 2
    files = tab.export_selected(tmp_path / "exported")
    assert len(files) == 2 and all(json.loads(Path(f).read_text())["schema_version"] == 1 for f in files)


def test_delete_to_trash_and_undo(tab):
    tab.reference_check.setChecked(False)
    tab.select_rows([0])
    moved = tab.delete_selected()
    assert len(moved) == 1 and moved[0].trashed.parent.name == ".trash"
    assert len(tab.documents()) == 1 and tab.undo_button.isEnabled()
    tab.undo_delete()
    assert len(tab.documents()) == 2 and not tab.undo_button.isEnabled()


def test_published_references_cannot_be_deleted(tab):
    tab.set_filter("published")
    tab.select_rows(range(len(tab.documents())))
    assert tab.delete_selected() == []


def test_figure_status_and_date_stay_in_view_on_a_laptop(tab, qtbot):
    from hwbench_gui.ui.reports.library_model import HEADERS as _HEADERS

    """A ~490 px Machine column pushed Figure, Status and Date off-screen at 1366 px."""
    tab.resize(1240, 640)
    tab.show()
    qtbot.waitExposed(tab)
    tab.refresh()
    header = tab.table.horizontalHeader()
    viewport = tab.table.viewport().width()
    for name in ("Figure", "Status", "Date"):
        column = _HEADERS.index(name)
        assert header.sectionViewportPosition(column) + header.sectionSize(column) <= viewport + 1, name
    assert header.sectionSize(_HEADERS.index("Machine")) <= 240


def test_charts_are_sharp(tab):
    from hwbench_gui.ui.reports.compare_view import CHART_DPI

    tab.select_rows(range(len(tab.documents())))
    tab.compare_selected("machine")
    labels = tab.chart_labels()
    assert labels
    from PySide6.QtGui import QImage

    from hwbench_gui.engine.reports.charts import to_png

    drawn = QImage.fromData(to_png(tab.report.charts[0].figure, dpi=CHART_DPI))
    # drawn at 144 dpi, laid out at its logical size (1.5 device pixels per logical pixel), or narrower where
    # the pane is: never stretched, so never blurred
    assert CHART_DPI >= 144
    expected = min(drawn.width() * 96 / CHART_DPI, tab.compare_view._chart_width())
    assert abs(labels[0].sizeHint().width() - expected) <= 2


def test_comparing_many_runs_does_not_grow_the_tab(tab):
    tab.select_rows(range(len(tab.documents())))
    tab.compare_selected("run")
    assert tab.minimumSizeHint().height() < 700 and tab.minimumSizeHint().width() < 1200


def test_a_comparison_names_the_files_the_library_skipped(tab):
    """The Compare page reports on the folder the Library page loaded: its skipped files go into the report."""
    tab.reference_check.setChecked(False)
    tab.compare_selected("run")
    assert {e.path.name for e in tab.report.errors} == {"corrupt.json", "newer.json", "package.json"}
    (tab.results_dir / "corrupt.json").unlink()
    tab.refresh()
    tab.compare_selected("run")
    assert {e.path.name for e in tab.report.errors} == {"newer.json", "package.json"}


def test_names_from_documents_are_plain_text_and_hostile_files_do_not_break_the_tab(tab, tmp_path):
    from PySide6.QtCore import Qt

    write_docs(tab.results_dir, [make_doc("t.rate", host="<b>bold</b><img src=x>", minutes=5)])
    (tab.results_dir / "warnings.json").write_text(json.dumps({**make_doc("t.rate"), "warnings": 3}))
    tab.reference_check.setChecked(False)  # reloads the folder
    assert "warnings.json" in tab.errors_label.text()
    tab.compare_selected("machine")
    label = tab.compare_view.summary_label
    assert label.textFormat() == Qt.PlainText and "<b>bold</b><img src=x>" in label.text()


def test_export_into_an_unwritable_folder_is_shown_not_raised(tab, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    tab.reference_check.setChecked(False)
    tab.select_rows([0])
    assert tab.export_selected(blocker / "sub") == []
    assert "Export stopped" in tab.messages[-1] and "Export stopped" in tab.errors_label.text()


def test_gui_export_refuses_to_overwrite_a_compared_result(tab):
    from hwbench_gui.ui.reports.export import ExportRefused

    tab.reference_check.setChecked(False)
    tab.compare_selected("run")
    target = Path(measured(tab)[0]["_path"])
    before = target.read_bytes()
    with pytest.raises(ExportRefused):
        tab.export_html(target)
    assert target.read_bytes() == before


def test_value_columns_stay_in_view_at_1366_px_with_the_h200_references(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports import ReportsTab

    results = tmp_path / "results"
    long_engine = "numpy-streaming-kernels-with-non-temporal-stores-on-every-socket-" * 2 + "and-huge-pages"
    local = [make_doc("host.membw", params={"array_mib": 0, "engine": engine, "threads": [1, 2]}, unit="GB/s",
                      minutes=n) for n, engine in enumerate(("auto", long_engine))]
    for doc in local:
        doc["benchmark"]["comparability_params"] = ["array_mib", "engine"]
    write_docs(results, local)
    context = AppContext(settings=qsettings, results_dir=results)
    tab = ReportsTab(context)
    qtbot.addWidget(tab)
    assert tab.wait_loaded()
    tab.resize(1366, 768)
    tab.show()
    qtbot.waitExposed(tab)
    h200 = [d for d in tab.documents(visible_only=False) if Path(d["_path"]).parent.name == "h200-2026-12-02"]
    # the older H200 runs come from several VMs named "vm": the one with most runs is the H200 side
    busiest = Counter(describe.machine_key(d) for d in h200).most_common(1)[0][0]
    h200 = [d for d in h200 if describe.machine_key(d) == busiest]
    tab.compare_documents(measured(tab) + h200, "machine")
    table = tab.compare_table
    last = table.columnCount() - 1
    assert table.columnCount() == 5
    assert table.columnViewportPosition(last) + table.columnWidth(last) <= table.viewport().width()
    config = [table.item(r, 2).text() for r in range(table.rowCount())]
    assert not any("rdzv_endpoint" in text or "nnodes" in text for text in config)  # shared: said once
    resnet = [r for r in range(table.rowCount()) if table.item(r, 0).text().startswith("model.resnet50")]
    assert resnet and all("batch=" in table.item(r, 2).text() for r in resnet)  # what differs is shown
    assert "rdzv_endpoint" in table.item(resnet[0], 0).toolTip()
    tab.shutdown()


def test_the_library_loads_in_the_background_and_a_newer_reload_wins(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports import ReportsTab

    results = tmp_path / "results"
    write_docs(results, [make_doc("t.rate"), make_doc("t.other", minutes=1)])
    tab = ReportsTab(AppContext(settings=qsettings, results_dir=results))
    qtbot.addWidget(tab)
    assert tab.model.rowCount() == 0 and "Loading" in tab.library_view.count_label.text()  # not built on this thread
    assert tab.wait_loaded() and tab.model.rowCount() == len(library.list_results(results, include_reference=True).docs)
    tab.library_view.refresh_in_background()
    write_docs(results, [make_doc("t.third", minutes=2)])
    tab.refresh()  # newer than the background listing still on its way
    rows = tab.model.rowCount()
    assert tab.wait_loaded() and tab.model.rowCount() == rows
    assert "t.third" in {d["benchmark"]["id"] for d in tab.documents(visible_only=False)}
    tab.shutdown()


def test_one_machine_shows_no_composite_and_exports_its_evaluation(tab, tmp_path):
    tab.reference_check.setChecked(False)
    tab.compare_documents(measured(tab), "machine")
    text = tab.compare_view.summary_label.text()
    assert "geometric mean" not in text and "one machine" in text
    html = tab.export_html(tmp_path / "one.html").read_text(encoding="utf-8")
    assert "hwbench evaluation of" in html and "Micro-benchmarks" in html and "Composite" not in html
    assert tab.export_pdf(tmp_path / "one.pdf").read_bytes().startswith(b"%PDF")


def test_the_busy_flag_stays_on_the_busy_side_in_the_compare_table(tab):
    busy = make_doc("t.rate", [10.0, 11.0, 12.0, 10.5, 11.5], host="here", minutes=30)
    busy["telemetry"] = {"noise": {"busy": True, "reasons": ["other processes used 160 % of a CPU core"]}}
    calm = on_other_machine(make_doc("t.rate", [20.0, 21.0, 22.0, 20.5, 21.5]), "h200box", "NVIDIA H200")
    tab.compare_documents([busy, calm], "machine")
    table = tab.compare_table
    assert "(busy)" in table.item(0, 3).text() and "busy" not in table.item(0, 4).text()
    lines = tab.compare_view.summary_label.text().splitlines()
    assert "1 on a busy machine" in lines[0] and "busy" not in lines[1]


@pytest.mark.usefixtures("fixture_benchmarks")
def test_a_run_the_queue_saves_is_listed_without_refresh(tab, qtbot):
    """The window's queue runs on a worker thread; the library hears the run end and lists its document."""
    import threading

    queue = tab.context.run_queue
    queue.add("test.ok", {})
    runner = threading.Thread(target=queue.run_next)
    runner.start()
    qtbot.waitUntil(lambda: not runner.is_alive() and tab.library_view._loader is None
                    and len(measured(tab)) == 3, timeout=20000)
    runner.join()
    assert "test.ok" in {d["benchmark"]["id"] for d in measured(tab)}


def test_two_machines_named_vm_are_two_machines_in_the_library(tab):
    docs = []
    for uuid in ("GPU-aaaaaaaa-0000", "GPU-bbbbbbbb-0000"):
        doc = make_doc("t.rate", host="vm", gpu="NVIDIA H200")
        doc["inventory"]["gpus"] = [{"name": "NVIDIA H200", "uuid": uuid}]
        docs.append(doc)
    write_docs(tab.results_dir, docs)
    tab.reference_check.setChecked(False)
    tab.refresh()
    machines = {tab.model.item(r, 0).text() for r in range(tab.model.rowCount())}
    assert {"vm (GPU aaaaaaaa) · NVIDIA H200", "vm (GPU bbbbbbbb) · NVIDIA H200"} <= machines


def test_compare_page_offers_a_comparable_run_and_fits_its_charts(qtbot, qsettings, tmp_path):
    """Two machines that ran one benchmark with other settings: the page says there is no comparable run,
    "Run like this here" on the row fills the form with what the baseline asked (not what its machine
    chose), the charts leave both runs out and say so, and every chart fits the pane's width."""
    from PySide6.QtGui import QPixmap
    from PySide6.QtWidgets import QLabel

    from hwbench_gui.ui.reports import ReportsTab

    asked = make_doc("host.membw", params={"array_mib": 0, "engine": "auto", "threads": [1, 2]}, unit="GB/s")
    asked["benchmark"]["comparability_params"] = ["array_mib", "engine"]
    asked["params_requested"] = {"engine": "auto"}
    asked["params"]["engine"] = "numpy"
    other = on_other_machine(asked, "beta", "Test GPU B")
    other["params"]["array_mib"] = other["params_requested"]["array_mib"] = 64
    results = tmp_path / "results"
    write_docs(results, [asked, other, make_doc("t.rate"),
                         on_other_machine(make_doc("t.rate"), "beta", "Test GPU B", 2.0)])
    requests = []
    context = AppContext(settings=qsettings, results_dir=results,
                         request_run=lambda bench_id, params: requests.append((bench_id, params)))
    tab = ReportsTab(context)
    qtbot.addWidget(tab)
    assert tab.wait_loaded()
    tab.reference_check.setChecked(False)
    tab.resize(1024 - 20, 700 - 60)
    tab.show()
    qtbot.waitExposed(tab)
    tab.compare_documents(measured(tab), "machine")
    view = tab.compare_view
    assert "No comparable run for 1 of the baseline's result(s)" in view.summary_label.text()
    assert view.charts_note.isVisible() and "host.membw" in view.charts_note.text()
    baseline = view.report.comparison.baseline
    row = next(i for i, r in enumerate(view.report.comparison.rows) if r.benchmark_id == "host.membw"
               and r.cells[baseline].metric is not None)
    view.compare_table.selectRow(row)
    assert view.run_like_selected()
    (bench_id, params), = requests
    base = view.report.comparison.rows[row].cells[baseline].metric.doc
    assert bench_id == "host.membw" and params["engine"] == "auto"
    assert params["array_mib"] == base["params_requested"].get("array_mib", base["params"]["array_mib"])
    qtbot.waitUntil(lambda: bool(view.chart_labels()))
    width = view.charts_scroll.viewport().width()
    wide = QLabel()
    wide.setProperty("chart_png", QPixmap(3 * width, 100))  # a chart drawn wider than the pane
    for label in view.chart_labels() + [wide]:
        view._fit(label)
        pixmap = label.pixmap()
        assert pixmap.width() / pixmap.devicePixelRatio() <= width, label.objectName()
    tab.shutdown()
