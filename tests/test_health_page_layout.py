"""Benchmarks → Health reads at 1024x700, 1366x768 and 1920x1080 with the H100 references: the page reads in
the lower pane's share without moving the split (the form keeps its rows while pages open and close, as for the
Pipeline and language-model pages), its labels show their whole text, and nothing lies off its right edge (it
scrolls down, never sideways)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication
from support import FIXTURES

from hwbench_gui.engine.paths import resources_dir
from hwbench_gui.ui.app import build_window
from hwbench_gui.ui.main_window import FRAME_ALLOWANCE

SIZES = [(1024, 700), (1366, 768), (1920, 1080)]


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


@pytest.mark.parametrize("screen", SIZES, ids=lambda v: "x".join(map(str, v)))
def test_the_health_page_reads_without_moving_the_form(qtbot, qsettings, screen):
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    win.resize(screen[0] - FRAME_ALLOWANCE[0], screen[1] - FRAME_ALLOWANCE[1])
    win.tabs.setCurrentIndex([win.tabs.tabText(i) for i in range(win.tabs.count())].index("Benchmarks"))
    tab = win.tab_widget("Benchmarks")
    _settle()
    split = tab.run_splitter.sizes()
    folder = resources_dir() / "reference" / "h100" / "health-2026-12-05"
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    for doc in docs:
        tab._add_result_row(doc)
    tab.results.selectRow(tab.results_table.documents().index(docs[0]))  # the checked 2-minute burn-in
    tab.bottom.setCurrentWidget(tab.family_page("health.burnin"))
    _settle()
    view = tab.family_page("health.burnin")
    assert tab.run_splitter.sizes() == split
    # the lower pane's share (it scrolls down for the rest): the verdict and the judgement at least
    assert view.viewport().height() >= 180
    body = view.widget()
    assert body.width() <= view.viewport().width()
    for label in (view.verdict, view.burns, view.reasons):
        assert label.text() and label.heightForWidth(label.width()) <= label.height(), label.text()[:60]
        assert label.geometry().right() <= body.width()
    assert "the load burns" in view.burns.text()
    tab.show_pipeline(json.loads((FIXTURES / "h200_datapath_2026-12-04.json").read_text()))
    _settle()
    assert tab.run_splitter.sizes() == split
    tab.bottom.setCurrentIndex(0)
    _settle()
    assert tab.run_splitter.sizes() == split


def test_the_language_model_pages_leave_the_form_where_it_is(qtbot, qsettings):
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    win.resize(1366 - FRAME_ALLOWANCE[0], 768 - FRAME_ALLOWANCE[1])
    win.tabs.setCurrentIndex([win.tabs.tabText(i) for i in range(win.tabs.count())].index("Benchmarks"))
    tab = win.tab_widget("Benchmarks")
    _settle()
    split = tab.run_splitter.sizes()
    folder = resources_dir() / "reference" / "h200" / "llm-2026-12-05"
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    for doc in docs:
        tab._add_result_row(doc)
    for bench_id in ("llm.infer", "llm.train"):
        tab.results.selectRow(next(i for i, d in enumerate(tab.results_table.documents())
                                   if d["benchmark"]["id"] == bench_id))
        _settle()
        tab.bottom.setCurrentWidget(tab.family_page(bench_id))
        _settle()
        assert tab.run_splitter.sizes() == split, bench_id
    tab.bottom.setCurrentIndex(0)
    _settle()
    assert tab.run_splitter.sizes() == split
