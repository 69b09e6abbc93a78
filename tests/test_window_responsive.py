"""What keeps the window responsive while a benchmark runs: the Demos tab builds one page at a time,
as each is first shown; the plots' axes repaint from a cache when their tab comes forward, and that
cache outlives the tab being hidden; a tab built before it is shown is made ready for its first show
one piece per event-loop turn; the Monitor draws the data gathered while it was hidden after the tab
switch, not inside it. None of this is timed here (CI is a busy 2-core box): the tests count the
work done where the stalls were measured (scripts/gui_stall.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication, QGraphicsItem

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

    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    monitor = win.tab_widget("Monitor")
    assert monitor.plots() and all(_axes_cached(item) for item in monitor.plots().values())
    snake = win.tab_widget("Demos").page("Snake")
    assert all(_axes_cached(plot.getPlotItem()) for plot in snake.plots.plots())
    assert _axes_cached(win.tab_widget("Benchmarks").plot.getPlotItem())
    win.close()


@pytest.fixture
def axis_paints(monkeypatch):
    """Counts the pyqtgraph axes' paints (each one replays its ticks, labels and grid lines)."""
    painted = []
    original = pg.AxisItem.paint

    def paint(self, *args):
        painted.append(self)
        return original(self, *args)

    monkeypatch.setattr(pg.AxisItem, "paint", paint)
    return painted


def _shown_window(qtbot, qsettings):
    from hwbench_gui.ui.app import build_window

    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    win.resize(1100, 700)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    win.activateWindow()  # the cache was lost on the view's window (de)activation: the window must be active
    qtbot.waitUntil(win.isActiveWindow, timeout=5000)
    return win


def _titles(win) -> list[str]:
    return [win.tabs.tabText(i) for i in range(win.tabs.count())]


def _settle(qtbot, ms: int = 200) -> None:
    qtbot.wait(ms)
    QApplication.processEvents()


def test_the_axes_cache_outlives_the_tab_being_hidden(qtbot, qsettings, axis_paints):
    """Showing a tab again draws its axes from their cache: no axis repaints (the Snake page's six did,
    on every tab switch, because a view's window activation on show threw every cache away)."""
    win = _shown_window(qtbot, qsettings)
    titles = _titles(win)
    win.tabs.setCurrentIndex(titles.index("Demos"))
    _settle(qtbot, 500)
    snake = win.tab_widget("Demos").page("Snake")
    assert snake.plots.score_plot.isVisible() and axis_paints  # drawn once, into the caches
    for _ in range(2):
        win.tabs.setCurrentIndex(titles.index("Inventory"))
        _settle(qtbot)
        axis_paints.clear()
        win.tabs.setCurrentIndex(titles.index("Demos"))
        _settle(qtbot)
        assert axis_paints == []
    win.close()


def test_a_tab_built_before_it_is_shown_is_made_ready_one_piece_per_turn(qtbot, qsettings, axis_paints, monkeypatch):
    """Built while another tab is shown, the Demos tab is laid out, then each plot view rendered off screen
    in a step of its own (never two views in one step, nothing drawn inside the build), so its first show
    repaints no axis, as a later show would not."""
    from hwbench_gui.ui import page_prep

    steps_run = []
    original_steps = page_prep.preparation_steps

    def recorded_steps(page, size):
        def recorded(step):
            def run():
                before = len(axis_paints)
                step()
                steps_run.append({id(axis.linkedView()) for axis in axis_paints[before:]})
            return run
        return [recorded(step) for step in original_steps(page, size)]

    monkeypatch.setattr(page_prep, "preparation_steps", recorded_steps)
    win = _shown_window(qtbot, qsettings)
    titles = _titles(win)
    assert win.tabs.currentIndex() == titles.index("Inventory")
    demos = win.tab_widget("Demos")
    assert axis_paints == [] and steps_run == []  # nothing laid out or drawn inside the build
    views = demos.page("Snake").plots.plots()
    qtbot.waitUntil(lambda: len(steps_run) == 1 + 2 * len(views), timeout=10000)
    assert steps_run[0] == set()  # the layout step draws no plot
    assert all(len(viewboxes) <= 1 for viewboxes in steps_run[1:])  # one plot per step at most
    assert {id(view.getPlotItem().getViewBox()) for view in views} == set().union(*steps_run)

    _settle(qtbot)
    axis_paints.clear()
    win.tabs.setCurrentIndex(titles.index("Demos"))
    _settle(qtbot)
    assert views[0].isVisible() and axis_paints == []
    win.close()


def test_the_tabs_not_shown_are_built_while_idle_imports_off_the_gui_thread(qtbot, qsettings, monkeypatch):
    """Once the window is up, the tabs the user has not opened are built ahead: their Qt-free dependencies
    imported on a worker thread (never a Qt module there: Qt objects made off the GUI thread crash the
    process), each tab built in an event-loop turn of its own, then the heap frozen; a tab opened later is
    shown, not built."""
    import gc
    import importlib
    import threading

    from PySide6.QtCore import QTimer

    from hwbench_gui.ui import main_window
    from hwbench_gui.ui.app import build_window

    imports, events = [], []
    real_import, real_build = importlib.import_module, main_window._LazyTab.build

    def spy_import(name, *args):
        imports.append((name, threading.current_thread() is threading.main_thread()))
        return real_import(name, *args)

    def spy_build(holder):
        if holder.widget is not None:
            return real_build(holder)
        events.append(holder.spec.title + (" (shown)" if holder.isVisible() else ""))
        widget = real_build(holder)
        # queued now, so it runs before anything the build queued after itself: a second build in the
        # same turn would come before this mark
        QTimer.singleShot(0, lambda: events.append("·"))
        return widget

    monkeypatch.setattr(importlib, "import_module", spy_import)
    monkeypatch.setattr(main_window._LazyTab, "build", spy_build)
    monkeypatch.setattr(main_window, "HIDDEN_TABS_DELAY_MS", 0)
    monkeypatch.setattr(gc, "freeze", lambda real=gc.freeze: (events.append("freeze"), real())[1])
    win = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    qtbot.waitUntil(lambda: "freeze" in events, timeout=60000)
    hidden = [spec.title for spec in main_window.available_tabs()][1:]
    assert events == ["Inventory (shown)", "·"] + [piece for title in hidden for piece in (title, "·")] + ["freeze"]
    preloads = {module for spec in main_window.available_tabs()[1:] for module in spec.preload}
    off_gui = {name for name, on_gui in imports if not on_gui}
    assert preloads and preloads <= off_gui  # the Qt-free ones (and what they import), on the worker
    assert not any(name.startswith(("hwbench_gui.ui", "PySide6", "pyqtgraph")) for name in off_gui)
    assert gc.get_freeze_count() > 0
    events.clear()
    win.tabs.setCurrentIndex(len(hidden))
    assert events == []
    win.close()
    gc.unfreeze()


def test_the_monitor_draws_what_it_missed_after_the_tab_switch_not_in_it(qtbot, qsettings, monkeypatch):
    """Neither the switch nor the 100 ms redraw timer draws the samples gathered while the tab was hidden:
    the redraw comes REDRAW_AFTER_SHOW_MS later, one plot per timer step (the timer fired in step
    with the stall script's tab switches and put the redraw and its repaint into the switch's turn)."""
    from hwbench_gui.ui import monitor
    from hwbench_gui.ui.monitor import tab as monitor_tab

    monkeypatch.setattr(monitor_tab, "REDRAW_AFTER_SHOW_MS", 400)  # long enough to see the timer wait
    win = _shown_window(qtbot, qsettings)
    titles = _titles(win)
    win.tabs.setCurrentIndex(titles.index("Monitor"))
    tab = win.tab_widget("Monitor")
    assert isinstance(tab, monitor.MonitorTab)
    qtbot.waitUntil(lambda: tab.redraw_count >= 1, timeout=10000)
    win.tabs.setCurrentIndex(titles.index("Inventory"))
    shown = tab._sampler.latest()["timestamp"]
    qtbot.waitUntil(lambda: tab._sampler.latest()["timestamp"] != shown, timeout=10000)  # a sample it missed
    count = tab.redraw_count
    draws = []
    real_draw = tab.grid.draw
    monkeypatch.setattr(tab.grid, "draw", lambda *a, **k: (draws.append(k.get("only")), real_draw(*a, **k))[1])
    win.tabs.setCurrentIndex(titles.index("Monitor"))
    assert tab.isVisible() and tab.redraw_count == count and draws == []  # not drawn inside the switch
    qtbot.wait(250)  # the redraw timer (every 100 ms) fires meanwhile, and waits
    assert tab.redraw_count == count and draws == []
    qtbot.waitUntil(lambda: tab.redraw_count > count, timeout=10000)  # drawn in later turns
    # one plot per step, each REDRAW_STEP_MS after the last (the whole grid and its repaint in one turn
    # took 45-50 ms of a busy 2-core machine)
    plots = len(tab.grid.plots)
    qtbot.waitUntil(lambda: len(draws) >= plots, timeout=5000)
    assert draws[:plots] == list(range(plots))
    win.close()


def test_queuing_a_run_probes_the_results_folder_off_the_gui_thread(qtbot, qsettings, tmp_path, monkeypatch,
                                                                   fixture_benchmarks):
    """The probe writes and fsyncs a file (100-200 ms of a frozen window on this VM's disk, at every run's
    start); it runs on a worker thread, and its warning still shows."""
    import threading

    from hwbench_gui.engine.results import store
    from hwbench_gui.ui.benchmarks import BenchmarksTab

    probed_on = []
    original = store.check_writable

    def check_writable(directory=None):
        probed_on.append(threading.current_thread())
        return original(directory)

    monkeypatch.setattr(store, "check_writable", check_writable)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    context = AppContext(settings=qsettings, results_dir=blocker / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    tab.show()
    tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    qtbot.waitUntil(lambda: tab.folder_warning.isVisible() and not tab.is_running(), timeout=20000)
    assert probed_on and threading.main_thread() not in probed_on
    assert "a-file" in tab.folder_warning.text()
    tab.shutdown()
    assert not context.workers.shutdown(timeout_s=10)


def test_next_turn_lets_a_due_timer_fire_before_its_step(qtbot):
    """A step queued with next_turn comes after the timers already due (the stall script's ticks,
    repaints, input); a 0 ms timer is a posted event, delivered before any of them."""
    import time

    from PySide6.QtCore import QObject, QTimer

    from hwbench_gui.ui.turns import next_turn

    context, order = QObject(), []

    def first():
        QTimer.singleShot(1, lambda: order.append("due timer"))
        time.sleep(0.003)  # the 1 ms timer is due before the step is queued
        next_turn(context, lambda: order.append("step"))

    QTimer.singleShot(0, first)
    qtbot.waitUntil(lambda: len(order) == 2, timeout=5000)
    assert order == ["due timer", "step"]
