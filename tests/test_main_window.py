"""The main window: tabs, menus, remembered state, themes, and survival of a broken tab."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from hwbench_gui.ui import main_window as mw
from hwbench_gui.ui.app import build_window
from hwbench_gui.ui.theme import is_dark


@pytest.fixture
def window(qtbot, qsettings):
    win = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    yield win
    win.close()


def _tab_titles(win):
    return [win.tabs.tabText(i) for i in range(win.tabs.count())]


def test_window_has_the_tabs_and_menus(window):
    assert _tab_titles(window)[:1] == ["Inventory"]
    assert {"Inventory", "Benchmarks", "Monitor"} <= set(_tab_titles(window))
    menus = [action.text().replace("&", "") for action in window.menuBar().actions()]
    assert menus == ["File", "View", "Help"]
    assert window.statusBar().isVisible()


def test_every_tab_builds_without_error(window):
    for title in _tab_titles(window):
        widget = window.tab_widget(title)
        assert not (isinstance(widget, QLabel) and "could not start" in widget.text()), widget.text()


def test_last_tab_and_geometry_are_remembered(qtbot, qsettings):
    first = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(first)
    with qtbot.waitSignal(first.ready, timeout=10000):
        first.show()
    first.resize(700, 500)  # inside the offscreen screen, which restoreGeometry clamps to
    first.tabs.setCurrentIndex(_tab_titles(first).index("Monitor"))
    first.close()

    second = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(second)
    assert second.tabs.tabText(second.tabs.currentIndex()) == "Monitor"
    assert (second.size().width(), second.size().height()) == (700, 500)
    second.close()


def test_theme_switch_changes_palette_and_is_saved(window, qsettings):
    window.set_theme("dark")
    assert is_dark(QApplication.instance().palette())
    assert qsettings.value("theme") == "dark"
    window.set_theme("light")
    assert not is_dark(QApplication.instance().palette())


def test_about_lists_versions():
    from hwbench_gui.ui.about import version_lines

    lines = version_lines()
    assert lines[0].startswith("hwbench: ")
    assert any(line.startswith("Qt: ") for line in lines)


def test_a_broken_tab_shows_its_error_and_the_window_lives(qtbot, qsettings, monkeypatch):
    broken = mw.TabSpec("Broken", "hwbench_gui.ui.about", "NoSuchClass")
    monkeypatch.setattr(mw, "TABS", mw.TABS + (broken,))
    win = build_window(qsettings, start_sampler=False)
    qtbot.addWidget(win)
    widget = win.tab_widget("Broken")
    assert isinstance(widget, QLabel) and "could not start" in widget.text()
    assert win.tab_widget("Inventory") is not None
    win.close()
