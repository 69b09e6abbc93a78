"""The Benchmarks tab keeps its shape on a 1024x700, a 1366x768 and a 1920x1080 screen: the catalogue's
names stay readable after runs end, the parameter form uses the height there is, the plot stays a plot
after resizes, and the user's splitter sizes come back."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from hwbench_gui.engine.run import registry
from hwbench_gui.ui.app import build_window
from hwbench_gui.ui.main_window import FRAME_ALLOWANCE

SCREENS = [(1024, 700), (1366, 768), (1920, 1080)]
#: Parameter rows the form shows whole without scrolling, per screen (the model benchmarks have 17).
FORM_ROWS = {(1024, 700): 4, (1366, 768): 6, (1920, 1080): 12}
#: A saved result's path as long as a deep results folder makes it.
LONG_STATUS = "model.resnet50 ok after 1834 s — saved to /home/someone/" + "deep/" * 40 + "result.json"


def _maximize(win, screen) -> None:
    """The size of the window maximized on ``screen`` (its frame and title bar left out)."""
    win.resize(screen[0] - FRAME_ALLOWANCE[0], screen[1] - FRAME_ALLOWANCE[1])


def _window(qtbot, qsettings, screen):
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    _maximize(win, screen)
    tab = win.tab_widget("Benchmarks")
    win.tabs.setCurrentIndex([win.tabs.tabText(i) for i in range(win.tabs.count())].index("Benchmarks"))
    QApplication.processEvents()
    return win, tab


def _end_runs(tab, count: int = 3) -> None:
    """What the run panel shows as runs end (every finish used to narrow the catalogue again)."""
    for _ in range(count):
        tab.run_status.setText(LONG_STATUS)
        QApplication.processEvents()


def _rows_in_view(tab) -> int:
    """Parameter rows whose editor is wholly inside the form's scroll area, as it is scrolled now."""
    form, viewport = tab.form(), tab.form_area.viewport()
    count = 0
    for param in tab.run_panel._current.params:
        editor = form.editor(param.name)
        top = editor.mapTo(viewport, QPoint(0, 0)).y()
        count += top >= 0 and top + editor.height() <= viewport.height()
    return count


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_long_status_line_leaves_the_catalogue_its_width(qtbot, qsettings, screen):
    win, tab = _window(qtbot, qsettings, screen)
    before = tab.catalogue.width()
    _end_runs(tab)
    assert tab.catalogue.width() == before >= 300
    assert tab.width() <= win.width()
    assert tab.run_status.text() == LONG_STATUS and tab.run_status.toolTip() == LONG_STATUS
    assert tab.run_status.is_elided()
    win.close()


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_benchmark_names_can_be_read(qtbot, qsettings, screen):
    win, tab = _window(qtbot, qsettings, screen)
    _end_runs(tab)
    tree = tab.tree
    metrics = tree.fontMetrics()
    room = tree.columnWidth(0) - 2 * tree.indentation()
    for bench in registry.all_benchmarks():
        if bench.category != "test":
            assert metrics.horizontalAdvance(bench.title) <= room, bench.title
    win.close()


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_parameter_form_uses_the_height_there_is(qtbot, qsettings, screen):
    win, tab = _window(qtbot, qsettings, screen)
    tab.select("model.resnet50")
    QApplication.processEvents()
    assert _rows_in_view(tab) >= FORM_ROWS[screen]
    win.close()


def test_the_plot_stays_a_plot_after_resizes(qtbot, qsettings, tmp_path):
    win, tab = _window(qtbot, qsettings, SCREENS[2])
    tab.select("model.resnet50")  # a long description and a note above the form
    not_a_folder = tmp_path / "results"
    not_a_folder.write_text("")
    win.context.results_dir = not_a_folder
    assert tab.check_results_folder()  # and the warning that results will not be saved
    tab.bottom.setCurrentWidget(tab.plot)
    _end_runs(tab)
    for screen in (SCREENS[0], SCREENS[1], SCREENS[2], SCREENS[0]):
        _maximize(win, screen)
        QApplication.processEvents()
        assert tab.plot.height() >= 160, screen
    win.close()


def test_the_splitter_sizes_are_remembered(qtbot, qsettings):
    win, tab = _window(qtbot, qsettings, SCREENS[1])
    tab.splitter.setSizes([520, win.width() - 520])
    tab.run_splitter.setSizes([300, 360])
    QApplication.processEvents()
    sizes = tab.splitter.sizes(), tab.run_splitter.sizes()
    win.close()  # the tab saves them as it shuts down

    again, tab = _window(qtbot, qsettings, SCREENS[1])
    assert (tab.splitter.sizes(), tab.run_splitter.sizes()) == sizes
    again.close()


def test_runs_that_end_with_a_long_saved_path_leave_the_catalogue_its_width(qtbot, qsettings, tmp_path,
                                                                            fixture_benchmarks):
    win, tab = _window(qtbot, qsettings, SCREENS[0])
    deep = tmp_path.joinpath(*["a-results-folder-deep-in-a-home"] * 8)
    win.context.run_queue.results_dir = deep
    win.context.results_dir = deep
    before = tab.catalogue.width()
    for _ in range(2):
        tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
        qtbot.waitUntil(lambda: not tab.is_running() and not tab.queue.pending(), timeout=30000)
        qtbot.wait(200)  # the layout settles
        assert str(deep) in tab.run_status.text()
        assert tab.catalogue.width() == before
    win.close()


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_catalogue_name_is_whole_and_the_value_column_in_view(qtbot, qsettings, screen):
    from hwbench_gui.engine.results.formatting import figure_text
    from hwbench_gui.ui.benchmarks.results_table import COLUMN

    win, tab = _window(qtbot, qsettings, screen)
    tree = tab.catalogue.tree
    width = tree.columnWidth(0)
    for item in tab.catalogue.iter_items():
        left = tree.visualItemRect(item).left()
        text_px = tree.fontMetrics().horizontalAdvance(item.text(0))
        assert left + text_px + 8 <= width, (item.text(0), screen)  # 8: the item's own margins
    table = tab.results_table.table
    doc = {"started_at": "2026-12-04T17:36:55", "benchmark": {"id": "model.fasterrcnn"}, "status": "ok",
           "precision": "FP16-AMP", "figure": {"name": "Faster R-CNN R50-FPN training throughput", "value": 104.5,
                                               "unit": "images/s"}, "device": "cuda:0 (NVIDIA H200)"}
    tab.results_table._add_saved([doc, doc], [])  # as saved results arrive: rows, then the columns fitted
    QApplication.processEvents()
    value = COLUMN["Value"]
    assert table.item(0, value).text() == figure_text(doc)
    right = table.columnViewportPosition(value) + table.columnWidth(value)
    assert table.columnViewportPosition(value) >= 0 and right <= table.viewport().width(), screen
    win.close()
