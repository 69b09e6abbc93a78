"""The main window: tabs, menus, remembered state, themes, and survival of a broken tab."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from hwbench_gui.ui import main_window as mw
from hwbench_gui.ui.app import build_window
from hwbench_gui.ui.theme import is_dark


@pytest.fixture
def window(qtbot, qsettings):
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
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


def test_without_a_driver_the_status_bar_says_so_plainly_with_nvmls_message_in_its_tooltip(window):
    from hwbench_gui.engine import nvml

    if nvml.unavailable_reason() is None:
        pytest.skip("this machine has a working NVIDIA driver")
    plain, detail = nvml.unavailable_summary()
    assert window._gpu_label.text() == plain and "NVML" not in plain
    assert window._gpu_label.toolTip() == detail and "NVML" in detail


def test_every_tab_fits_a_1024_px_wide_screen(window, qtbot):
    """No tab asks for more width than a 1024x700 screen has (the Reports library's row of nine buttons did,
    and pushed the whole window past the screen's edge)."""
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        qtbot.wait(10)
        page = window.tabs.widget(i)
        assert page.minimumSizeHint().width() <= 1000, (window.tabs.tabText(i), page.minimumSizeHint())


def test_last_tab_and_geometry_are_remembered(qtbot, qsettings):
    first = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(first)
    with qtbot.waitSignal(first.ready, timeout=10000):
        first.show()
    first.resize(700, 500)  # inside the offscreen screen, which restoreGeometry clamps to
    first.tabs.setCurrentIndex(_tab_titles(first).index("Monitor"))
    first.close()

    second = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
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
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    widget = win.tab_widget("Broken")
    assert isinstance(widget, QLabel) and "could not start" in widget.text()
    assert win.tab_widget("Inventory") is not None
    win.close()


# --- workers and the one shutdown rule ------------------------------------------------------------

def _until_aborted(control):
    control.abort_event.wait(60)
    return "stopped"


def _counting(control):
    n = 0
    while True:  # only the worker's abort, between two yields, ends it
        n += 1
        yield n


def test_closing_the_window_aborts_every_worker_and_waits_for_them(qtbot, qsettings, monkeypatch):
    from hwbench_gui.ui.workers import create_worker

    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    release = threading.Event()
    workers = [create_worker(_until_aborted), create_worker(_counting),
               create_worker(lambda control: release.wait(60))]  # ignores the abort
    for worker in workers:
        win.context.workers.start(worker)
    monkeypatch.setattr(mw, "SHUTDOWN_WAIT_S", 0.5)
    win.close()
    try:
        assert workers[0].is_finished() and workers[1].is_finished()
        assert workers[2].is_running(), "a worker that does not stop is left running, never destroyed"
        assert win.context.workers.running() == [workers[2]]
    finally:
        release.set()
    assert workers[2].wait(10)


def test_a_worker_reports_on_the_gui_thread_in_order(qtbot):
    from hwbench_gui.ui.workers import create_worker

    def work(control, n):
        control.emit("first")
        for i in range(n):
            yield i
        return "done"

    seen = []
    worker = create_worker(work, 3)
    for name in ("started", "yielded", "returned", "errored", "finished"):
        getattr(worker, name).connect(
            lambda *value, name=name: seen.append(
                (name, *value, threading.current_thread() is threading.main_thread())))
    with qtbot.waitSignal(worker.finished, timeout=10000):
        worker.start()
    assert seen == [("started", True), ("yielded", "first", True), ("yielded", 0, True), ("yielded", 1, True),
                    ("yielded", 2, True), ("returned", "done", True), ("finished", True)]


def test_a_failing_worker_sends_its_exception(qtbot):
    from hwbench_gui.ui.workers import create_worker

    def broken(control):
        raise ValueError("nope")

    errors = []
    worker = create_worker(broken)
    worker.errored.connect(errors.append)
    with qtbot.waitSignal(worker.finished, timeout=10000):
        worker.start()
    assert [str(e) for e in errors] == ["nope"]
    assert errors[0].__traceback__.tb_frame.f_code.co_name == "broken"


def test_the_app_exits_cleanly_past_a_worker_that_will_not_stop(tmp_path):
    """The process ends with status 0 while a worker that ignores the abort is still sending values."""
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, sys, threading
        from PySide6.QtCore import QSettings, QTimer
        from hwbench_gui.ui import main_window
        from hwbench_gui.ui.app import create_app, build_window
        from hwbench_gui.ui.workers import create_worker

        def stubborn(control):
            while True:
                control.emit("still here")
                threading.Event().wait(0.001)

        main_window.SHUTDOWN_WAIT_S = 0.2
        app = create_app([])
        window = build_window(QSettings(sys.argv[1], QSettings.IniFormat), start_sampler=False, build_hidden_tabs=False)
        worker = window.context.workers.start(create_worker(stubborn))
        worker.yielded.connect(lambda value: None)
        window.ready.connect(lambda: QTimer.singleShot(200, window.close))
        window.show()
        app.exec()
        print("running after close:", worker.is_running(), flush=True)
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HWBENCH_DATA_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "s.ini")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "running after close: True" in proc.stdout
    assert "Destroyed while thread" not in proc.stderr


def test_window_fits_a_1366x768_screen_and_keeps_its_status_bar_on_it(qtbot, qsettings, monkeypatch):
    """The window and its status bar fit a laptop's 1366x768 minus its panel (1280x820 plus the frame did not)."""
    from PySide6.QtCore import QRect

    laptop = QRect(0, 0, 1366, 768 - 32)  # a 32 px desktop panel
    monkeypatch.setattr(mw.MainWindow, "available_geometry", lambda self: laptop)
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    assert win.height() + mw.FRAME_ALLOWANCE[1] <= laptop.height()
    assert laptop.contains(win.geometry())
    for title in _tab_titles(win):  # every tab built: none may ask for more than the laptop has
        win.tab_widget(title)
    assert win.minimumSizeHint().height() <= win.height()
    assert win.minimumSizeHint().width() <= win.width()
    win.close()


def test_a_saved_geometry_that_does_not_fit_this_screen_is_not_restored(qtbot, qsettings, monkeypatch):
    from PySide6.QtCore import QRect

    big = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(big)
    big.setGeometry(QRect(100, 100, 760, 560))
    big._save_settings()
    big.close()
    small = QRect(0, 0, 640, 480)
    monkeypatch.setattr(mw.MainWindow, "available_geometry", lambda self: small)
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    assert small.contains(win.geometry())
    win.close()


def test_about_names_the_log_file(qtbot):
    from hwbench_gui.engine.paths import log_file_path
    from hwbench_gui.ui.about import AboutDialog

    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    assert str(log_file_path()) in dialog.log_label.text()


def test_switching_theme_recolours_plots_and_the_catalogue(window):
    """A live theme switch recolours the plots and the tree (they used to keep the old palette)."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from hwbench_gui.ui.theme import plot_colors

    bench = window.tab_widget("Benchmarks")
    monitor = window.tab_widget("Monitor")
    unavailable = [item for item in bench._iter_items() if item.data(1, mw.Qt.UserRole) == "unavailable"]
    try:
        for name in ("dark", "light"):
            window.set_theme(name)
            palette = QApplication.instance().palette()
            background, _ = plot_colors(palette)
            assert bench.plot.backgroundBrush().color().name() == background, name
            assert monitor._layout_widget.backgroundBrush().color().name() == background, name
            for item in unavailable:
                assert item.foreground(0).color() == palette.color(QPalette.Disabled, QPalette.Text)
    finally:
        window.set_theme("system")


def test_reports_run_like_this_fills_the_benchmark_form_for_review(window, monkeypatch):
    """Reports → Run like this here: the Benchmarks tab comes forward with the selected result's benchmark and
    its deciding parameters in the form; nothing runs until Run is pressed."""
    import json

    from hwbench_gui.engine.results import library
    from hwbench_gui.ui.benchmarks import BenchmarksTab

    queued = []
    monkeypatch.setattr(BenchmarksTab, "enqueue", lambda self, bench_id, params: queued.append((bench_id, params)))
    reports = window.tab_widget("Reports")
    ref = library.reference_dir() / "archive" / "h200-2026-12-02" / "2026-12-02T13-45-57_model.resnet50_37433f9f.json"
    doc = json.loads(ref.read_text())
    params = doc["params"]
    assert (params["precision"], params["batch"], params["channels_last"]) == ("bf16-amp", 256, True)
    monkeypatch.setattr(reports, "selected_documents", lambda: [doc])
    reports.run_like_selected()
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Benchmarks"
    bench = window.tab_widget("Benchmarks")
    assert queued == [] and "<h3>ResNet-50 training" in bench.title.text()
    values = bench.form().values()
    assert (values["precision"], values["batch"], values["channels_last"]) == ("bf16-amp", 256, "true")
    bench.enqueue_current()  # the user reviewed and pressed Run
    assert queued and queued[0][0] == "model.resnet50" and queued[0][1]["batch"] == 256


def _answer_the_quit_question(qtbot, button_text: str, seen: list[str]) -> None:
    """Click ``button_text`` in the question the window asks, once it is up (it runs its own event loop)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMessageBox

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, answer)
            return
        seen.append(box.text())
        (button,) = [b for b in box.buttons() if b.text() == button_text]
        button.click()

    QTimer.singleShot(0, answer)


def test_quitting_during_a_run_asks_and_keep_running_keeps_it(qtbot, qsettings, fixture_benchmarks):
    """Ctrl+Q during a run asks first: "Keep running" leaves the window and the run alone; "Cancel the
    run and quit" cancels the run and closes the window."""
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    (quit_action,) = [a for m in win.menuBar().actions() for a in m.menu().actions() if a.text() == "&Quit"]
    tab = win.tab_widget("Benchmarks")
    tab.enqueue("test.slow", {})
    qtbot.waitUntil(tab.is_running, timeout=5000)

    asked: list[str] = []
    _answer_the_quit_question(qtbot, "Keep running", asked)
    quit_action.trigger()
    assert asked and "cancels the running benchmark" in asked[0]
    qtbot.wait(300)
    assert win.isVisible() and tab.is_running()

    _answer_the_quit_question(qtbot, "Cancel the run and quit", asked)
    quit_action.trigger()
    assert len(asked) == 2 and not win.isVisible()
    qtbot.waitUntil(lambda: not tab.is_running(), timeout=15000)


def test_quitting_when_nothing_runs_does_not_ask(window):
    assert window.confirm_quit()
