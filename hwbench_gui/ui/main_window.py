"""The main window: a tab per area, menus, status bar, remembered geometry, theme.

The window appears with only its first tab built, before pyqtgraph or a tab's heavier dependencies
load. Once it is up, the other tabs are built while it is idle: their Qt-free dependencies are
imported on a worker thread (matplotlib for the reports, the benchmark catalogue), then each tab is
built, its own module imported there (Qt objects live on the GUI thread only), in an event-loop turn
of its own, and made ready for its first show piece by piece (:mod:`.page_prep`), so a tab opened
during a run comes forward without a build or an import in the click. A tab the
user opens first is built then, as before. With the tabs built, the objects made so far are frozen
out of the garbage collector's full collections (:mod:`.heap`). The window owns every tab, the
shared telemetry sampler and every worker thread (``context.workers``), and stops them all in
``closeEvent``.
"""

from __future__ import annotations

import importlib
import logging
import traceback
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QByteArray, QRect, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.ui import heap
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.page_prep import prepare_in_steps
from hwbench_gui.ui.workers import create_worker
from hwbench_gui.ui.theme import THEMES, apply_theme
from hwbench_gui.ui.turns import next_turn

log = logging.getLogger(__name__)

#: How long closing the window waits for all worker threads together after aborting them.
SHUTDOWN_WAIT_S = 10.0
#: The window's size on a screen with room for it.
DEFAULT_SIZE = (1280, 820)
#: Room left for the window manager's title bar and borders, which ``resize`` does not count.
FRAME_ALLOWANCE = (16, 40)
#: Milliseconds after the window is ready before the tabs not yet shown start being built: the first
#: paint and the first tab's own start-up work go first.
HIDDEN_TABS_DELAY_MS = 700


@dataclass(frozen=True)
class TabSpec:
    title: str
    module: str
    class_name: str
    #: Qt-free modules the tab needs that take long to import: imported ahead on a worker thread. The tab's
    #: own module, and anything that touches Qt (pyqtgraph included), is imported on the GUI thread only.
    preload: tuple[str, ...] = ()


#: The window's tabs in order; each class takes ``(context, parent)`` and may define ``shutdown()``.
TABS = (
    TabSpec("Inventory", "hwbench_gui.ui.inventory", "InventoryTab"),
    TabSpec("Benchmarks", "hwbench_gui.ui.benchmarks", "BenchmarksTab",
            ("numpy", "hwbench_gui.engine.run.registry", "hwbench_gui.engine.results.library")),
    TabSpec("Monitor", "hwbench_gui.ui.monitor", "MonitorTab", ("numpy",)),
    TabSpec("Demos", "hwbench_gui.ui.demos.tab", "DemosTab"),
    TabSpec("Reports", "hwbench_gui.ui.reports", "ReportsTab", ("hwbench_gui.engine.reports.report",)),
)


def available_tabs() -> list[TabSpec]:
    """Tabs whose module exists in this build (later areas plug in by adding to :data:`TABS`)."""
    return [spec for spec in TABS if importlib.util.find_spec(spec.module) is not None]


class _LazyTab(QWidget):
    """Holds a tab's place until it is first shown, then builds the real widget inside itself."""

    def __init__(self, spec: TabSpec, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.context = context
        self.widget: QWidget | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        if self.widget is not None:
            return self.widget
        try:
            module = importlib.import_module(self.spec.module)
            self.widget = getattr(module, self.spec.class_name)(self.context, self)
        except Exception as exc:  # a broken tab must not take the window down
            log.exception("tab %s failed to build", self.spec.title)
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.widget = QLabel(f"The {self.spec.title} tab could not start:\n{detail}")
            self.widget.setAlignment(Qt.AlignCenter)
            self.widget.setWordWrap(True)
        self._layout.addWidget(self.widget)
        stack = self.parentWidget()
        if stack is not None and not self.isVisible():  # built before it is shown: get it ready while idle
            prepare_in_steps(self, lambda: stack.contentsRect().size())
        return self.widget

    def shutdown(self) -> None:
        if self.widget is not None and hasattr(self.widget, "shutdown"):
            self.widget.shutdown()


def _preload(control, specs: list[TabSpec]):
    """Worker body: import each tab's Qt-free :attr:`TabSpec.preload` modules, yielding the tab's title
    once they are in (a module that fails is left for the tab to report when it is built). Nothing that
    touches Qt is imported here: Qt objects made off the GUI thread crash the process."""
    for spec in specs:
        if control.aborted:
            return
        for module in spec.preload:
            try:
                importlib.import_module(module)
            except Exception:
                log.exception("importing %s ahead of the %s tab failed", module, spec.title)
        yield spec.title


class MainWindow(QMainWindow):
    #: Emitted once the window has been shown and its first tab built.
    ready = Signal()

    def __init__(self, context: AppContext, start_sampler: bool = True, build_hidden_tabs: bool = True) -> None:
        super().__init__()
        self.context = context
        self.context.show_status = self._show_status
        self.context.request_run = self.request_run
        self._start_sampler = start_sampler
        self._build_hidden = build_hidden_tabs
        self.setWindowTitle("hwbench")

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self._lazy: list[_LazyTab] = []
        for spec in available_tabs():
            holder = _LazyTab(spec, context, self.tabs)
            self._lazy.append(holder)
            self.tabs.addTab(holder, spec.title)
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self._gpu_label = QLabel("")
        self.statusBar().addPermanentWidget(self._gpu_label)
        self._build_menus()
        self._restore_settings()
        QTimer.singleShot(0, self._after_show)

    # --- menus -----------------------------------------------------------------------------
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_results = QAction("Open &results folder", self)
        open_results.triggered.connect(self._open_results_folder)
        file_menu.addAction(open_results)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        view_menu = self.menuBar().addMenu("&View")
        for index, holder in enumerate(self._lazy):
            action = QAction(holder.spec.title, self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            view_menu.addAction(action)
        view_menu.addSeparator()
        theme_menu = view_menu.addMenu("&Theme")
        self._theme_group = QActionGroup(self)
        current = self.context.settings.value("theme", "system")
        for name in THEMES:
            action = QAction(name.capitalize(), self, checkable=True)
            action.setData(name)
            action.setChecked(name == current)
            action.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            self._theme_group.addAction(action)
            theme_menu.addAction(action)

        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About hwbench", self)
        about.triggered.connect(self._show_about)
        help_menu.addAction(about)

    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        apply_theme(app, name)
        self.context.settings.setValue("theme", name)
        for action in self._theme_group.actions():
            action.setChecked(action.data() == name)

    def _show_about(self) -> None:
        from hwbench_gui.ui.about import AboutDialog

        AboutDialog(self).exec()

    def _open_results_folder(self) -> None:
        folder = Path(self.context.results_dir)
        folder.mkdir(parents=True, exist_ok=True)
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            QMessageBox.information(self, "Results folder", f"Results are stored in\n{folder}")

    # --- state -------------------------------------------------------------------------------
    def available_geometry(self) -> QRect:
        """The part of the screen a window may use (without panels and docks)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else QRect(0, 0, *DEFAULT_SIZE)

    def fit_to(self, available: QRect) -> None:
        """The default size, shrunk to what ``available`` holds with the frame, centred in it."""
        width = min(DEFAULT_SIZE[0], available.width() - FRAME_ALLOWANCE[0])
        height = min(DEFAULT_SIZE[1], available.height() - FRAME_ALLOWANCE[1])
        self.resize(width, height)
        self.move(available.x() + (available.width() - width) // 2,
                  available.y() + max(0, (available.height() - height - FRAME_ALLOWANCE[1]) // 2))

    def _restore_settings(self) -> None:
        settings = self.context.settings
        available = self.available_geometry()
        geometry = settings.value("window/geometry")
        restored = isinstance(geometry, QByteArray) and self.restoreGeometry(geometry)
        # A geometry saved on a larger screen (or a screen no longer attached) would put the status
        # bar and the bottom buttons off-screen: use it only if it fits where the window is now.
        if not restored or not available.contains(self.geometry()):
            self.fit_to(available)
        state = settings.value("window/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        last = settings.value("window/tab", "")
        titles = [holder.spec.title for holder in self._lazy]
        if last in titles:
            self.tabs.setCurrentIndex(titles.index(last))

    def _save_settings(self) -> None:
        settings = self.context.settings
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        holder = self.tabs.currentWidget()
        if isinstance(holder, _LazyTab):
            settings.setValue("window/tab", holder.spec.title)
        settings.sync()

    def _on_tab_changed(self, index: int) -> None:
        holder = self.tabs.widget(index)
        if isinstance(holder, _LazyTab):
            holder.build()

    def request_run(self, bench_id: str, params: dict) -> None:
        """Show a run in the Benchmarks tab's form for review and bring that tab forward (Reports → Run like
        this here); it runs when the user presses Run."""
        for index, holder in enumerate(self._lazy):
            if holder.spec.title == "Benchmarks":
                tab = holder.build()
                self.tabs.setCurrentIndex(index)
                tab.review_run(bench_id, params)
                return
        raise RuntimeError("this build has no Benchmarks tab")

    def tab_widget(self, title: str) -> QWidget | None:
        """The built widget of the tab called ``title`` (building it if needed); for tests and scripts."""
        for holder in self._lazy:
            if holder.spec.title == title:
                return holder.build()
        return None

    def _after_show(self) -> None:
        self._on_tab_changed(self.tabs.currentIndex())
        self._update_gpu_label()
        if self._start_sampler:
            self._start_telemetry()
        self.ready.emit()
        if self._build_hidden:
            QTimer.singleShot(HIDDEN_TABS_DELAY_MS, self, self.build_hidden_tabs)

    def build_hidden_tabs(self) -> None:
        """Import the Qt-free modules of the tabs not built yet on a worker; build each tab (hidden, its own
        module imported here) once they are in, one per event-loop turn; freeze the heap after the last."""
        holders = {holder.spec.title: holder for holder in self._lazy if holder.widget is None}
        arrived: list[_LazyTab] = []
        state = {"imports_done": False, "scheduled": False}

        def build_next() -> None:
            state["scheduled"] = False
            if arrived:
                arrived.pop(0).build()
                if arrived or state["imports_done"]:  # the next piece gets a turn of its own
                    schedule()
            elif state["imports_done"]:
                heap.freeze()

        def schedule() -> None:
            if not state["scheduled"]:
                state["scheduled"] = True
                next_turn(self, build_next)

        def on_imported(title: str) -> None:
            if shiboken6.isValid(self):  # the window may be gone (deleted, not closed) before its imports end
                arrived.append(holders[title])
                schedule()

        def on_finished() -> None:
            if shiboken6.isValid(self):
                state["imports_done"] = True
                schedule()

        worker = create_worker(_preload, [holder.spec for holder in holders.values()])
        worker.yielded.connect(on_imported)
        worker.finished.connect(on_finished)
        self.context.workers.start(worker)

    def _update_gpu_label(self) -> None:
        from hwbench_gui.engine import nvml

        summary = nvml.unavailable_summary()
        if summary:
            self._gpu_label.setText(summary[0])
            self._gpu_label.setToolTip(summary[1])
        else:
            count = nvml.device_count()
            self._gpu_label.setText(f"{count} NVIDIA GPU{'s' if count != 1 else ''}")

    def _start_telemetry(self) -> None:
        try:
            from hwbench_gui.engine.telemetry import Sampler
        except ImportError as exc:
            self._show_status(f"Telemetry unavailable: {exc}", 0)
            return
        interval = float(self.context.settings.value("monitor/interval_s", 0.5))
        self.context.sampler = Sampler(interval_s=interval)
        self.context.sampler.start()

    def _show_status(self, message: str, timeout_ms: int = 0) -> None:
        self.statusBar().showMessage(message, timeout_ms)

    def _running_benchmarks_tab(self) -> QWidget | None:
        """The Benchmarks tab while one of its runs is going on (None when it is not built or idle)."""
        for holder in self._lazy:
            tab = holder.widget
            if holder.spec.title == "Benchmarks" and tab is not None and getattr(tab, "is_running", lambda: False)():
                return tab
        return None

    def confirm_quit(self) -> bool:
        """Whether the window may close now: during a run, the user chooses between cancelling it and
        quitting, and keeping it running (the default, so a stray Ctrl+Q or Enter loses nothing)."""
        tab = self._running_benchmarks_tab()
        if tab is None:
            return True
        waiting = len(tab.queue.pending())
        box = QMessageBox(QMessageBox.Warning, "A benchmark is running",
                          "Quitting now cancels the running benchmark"
                          + (f" and drops the {waiting} queued after it" if waiting else "")
                          + ". A cancelled run is saved as cancelled, without a figure.", parent=self)
        box.setInformativeText(tab.run_status.text())
        quit_button = box.addButton("Cancel the run and quit", QMessageBox.DestructiveRole)
        keep_button = box.addButton("Keep running", QMessageBox.RejectRole)
        box.setDefaultButton(keep_button)
        box.setEscapeButton(keep_button)
        box.exec()
        return box.clickedButton() is quit_button

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if not self.confirm_quit():
            event.ignore()
            return
        self._save_settings()
        for holder in self._lazy:  # each tab stops its timers and aborts its workers, without waiting
            try:
                holder.shutdown()
            except Exception:
                log.exception("tab %s did not shut down cleanly", holder.spec.title)
        self.context.stop_watching_results()  # no look at the folder may start a worker after this
        self.context.workers.shutdown(timeout_s=SHUTDOWN_WAIT_S)
        if self.context.sampler is not None:
            self.context.sampler.stop()
        super().closeEvent(event)
