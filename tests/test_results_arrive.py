"""Everyday use of the Benchmarks tab: opening a result leaves the form where it is (the split never moves), a
double-click brings the result's page forward, and documents ``hwbench run`` writes into the results folder while
the window is open appear in the Benchmarks and Reports tabs (one row per file, this window's own runs included).
Each step waits for the watch's signal, not for its timer."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication

from hwbench_gui.engine.paths import resources_dir
from hwbench_gui.engine.results.arrivals import Arrivals
from hwbench_gui.engine.results.store import write_result
from hwbench_gui.ui.context import AppContext

LLM = resources_dir() / "reference" / "h100" / "llm-2026-12-05"


def _doc(name: str) -> dict:
    return json.loads((LLM / name).read_text())


@pytest.fixture
def tab(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.benchmarks import BenchmarksTab

    (tmp_path / "results").mkdir()
    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    widget = BenchmarksTab(context)
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    widget.show()
    yield widget
    widget.shutdown()
    context.workers.shutdown(timeout_s=10)


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


def test_arrivals_report_new_and_rewritten_files_only(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    first = write_result(_doc("2026-12-05T17-53-34_llm.infer_3d570474.json"), folder)
    arrivals = Arrivals(folder)
    assert arrivals.changed() == []  # what was there when it began is the folder's listing's
    (folder / ".x.json.0123abcd.tmp").write_text("{")  # a writer's temporary is not a result
    second = write_result(_doc("2026-12-05T17-49-58_llm.infer_78443d68.json"), folder)
    (folder / "broken.json").write_text("{not json")
    changed = arrivals.changed()
    assert changed == sorted([second, folder / "broken.json"])
    loaded = Arrivals.load(changed)
    assert [d["_path"] for d in loaded.docs] == [str(second)] and len(loaded.errors) == 1
    assert arrivals.changed() == []
    first.write_text(first.read_text() + " ")  # rewritten: reported again
    assert arrivals.changed() == [first]


def test_a_result_written_by_the_cli_appears_in_the_open_tab(tab, qtbot):
    folder = tab.context.results_dir
    written = write_result(_doc("2026-12-05T17-49-58_llm.infer_78443d68.json"), folder)
    watch = tab.context.results_watch()
    with qtbot.waitSignal(watch.arrived, timeout=30000):
        watch.look()
    _settle()
    docs = tab.results_table.documents()
    assert [d["_path"] for d in docs] == [str(written)]
    # the same file seen again (a later look, or this window's own run saved there) keeps its one row
    watch.look()
    _settle()
    tab.results_table._on_arrived([dict(docs[0])], [])
    assert len(tab.results_table.documents()) == 1
    assert tab.results.rowCount() == 1


def test_reports_lists_a_result_written_while_it_is_open(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports.tab import ReportsTab

    (tmp_path / "results").mkdir()
    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    reports = ReportsTab(context)
    qtbot.addWidget(reports)
    reports.reference_check.setChecked(False)
    assert reports.library_view.wait_loaded()
    assert reports.model.rowCount() == 0
    write_result(_doc("2026-12-05T17-53-34_llm.infer_3d570474.json"), context.results_dir)
    with qtbot.waitSignal(context.results_watch().arrived, timeout=30000):
        context.results_watch().look()
    assert reports.library_view.wait_loaded()
    assert reports.model.rowCount() == 1
    context.stop_watching_results()
    context.workers.shutdown(timeout_s=10)


def test_opening_a_result_keeps_the_form_and_brings_its_page(tab, qtbot):
    for name in ("2026-12-05T17-49-58_llm.infer_78443d68.json", "2026-12-05T22-37-00_llm.train_29d1945b.json"):
        tab._add_result_row(_doc(name))
    _settle()
    split = tab.run_splitter.sizes()
    form_rows = tab.form_area.viewport().height()
    for row in (0, 1, 0):
        tab.results.selectRow(row)  # selecting draws the result: the lower tab stays where the user is
        _settle()
        assert tab.bottom.currentIndex() == 0
    tab.results_table._on_activated(tab.results.item(0, 0))  # a double-click (or Enter) opens it
    _settle()
    assert tab.bottom.currentWidget() is tab.family_page("llm.infer")
    assert tab.run_splitter.sizes() == split and tab.form_area.viewport().height() == form_rows
    tab.results.selectRow(1)
    tab.results_table._on_activated(tab.results.item(1, 0))
    _settle()
    assert tab.bottom.currentWidget() is tab.family_page("llm.train")
    tab.bottom.setCurrentIndex(0)
    _settle()
    assert tab.run_splitter.sizes() == split and tab.form_area.viewport().height() == form_rows
