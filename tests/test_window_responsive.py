"""What keeps the window responsive while a benchmark runs: the Demos tab builds one page at a time,
as each is first shown, and the plots' axes repaint from a cache when their tab comes forward."""

from __future__ import annotations

import sys
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from hwbench_gui.ui.context import AppContext


def test_the_demos_tab_builds_a_page_when_it_is_first_shown(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.demos.tab import PAGES, DemosTab

    for _title, module, _class in PAGES[1:]:
        sys.modules.pop(module, None)
    context = AppContext(settings=qsettings, results_dir=Path(tmp_path))
    tab = DemosTab(context)
    qtbot.addWidget(tab)
    tab.show()
    assert list(tab.pages) == ["Snake"]
    assert not any(module in sys.modules for _title, module, _class in PAGES[1:])  # not even imported

    tab.tabs.setCurrentIndex(2)
    assert list(tab.pages) == ["Snake", "Tracking"] and tab.pages["Tracking"].isVisible()
    assert tab.page("Motion transfer") is tab.page("Motion transfer")
    tab.shutdown()
    assert not context.workers.shutdown(timeout_s=10)


def _axes_cached(plot_item: pg.PlotItem) -> bool:
    return all(plot_item.getAxis(side).cacheMode() == QGraphicsItem.DeviceCoordinateCache
               for side in ("left", "bottom"))


def test_the_plots_axes_repaint_from_a_cache(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.app import build_window

    win = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    monitor = win.tab_widget("Monitor")
    assert monitor.plots() and all(_axes_cached(item) for item in monitor.plots().values())
    snake = win.tab_widget("Demos").page("Snake")
    assert all(_axes_cached(plot.getPlotItem()) for plot in snake.plots.plots())
    assert _axes_cached(win.tab_widget("Benchmarks").plot.getPlotItem())
    win.close()
