"""``hwbench-gui``: start the Qt application and show the main window."""

from __future__ import annotations

import os
import sys
import time

_T0 = time.perf_counter()

#: When set, print "shown <seconds>" on stdout once the window is on screen, then quit
#: (the start-up benchmark script reads this).
EXIT_AFTER_SHOW_ENV = "HWBENCH_EXIT_AFTER_SHOW"
#: The window's log file keeps this many bytes, then rotates (two old files kept).
LOG_MAX_BYTES = 1_000_000


def setup_log_file():
    """Log warnings and errors of the window to :func:`~hwbench_gui.engine.paths.log_file_path`,
    rotated; returns the path, or None when the folder cannot be written (the window starts anyway)."""
    import logging
    from logging.handlers import RotatingFileHandler

    from hwbench_gui.engine.paths import log_file_path

    path = log_file_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=2, encoding="utf-8")
    except OSError as exc:
        print(f"hwbench-gui: no log file ({exc})", file=sys.stderr)
        return None
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.captureWarnings(True)
    return path


def create_app(argv: list[str] | None = None):
    from PySide6.QtWidgets import QApplication

    from hwbench_gui.ui import heap

    app = QApplication.instance() or QApplication(list(argv if argv is not None else sys.argv))
    heap.collect_on_gui_thread(app)
    app.setOrganizationName("hwbench")
    app.setApplicationName("hwbench")
    app.setApplicationDisplayName("hwbench")
    # Matches packaging/hwbench.desktop, so Wayland/X11 shells tie the window to the launcher entry.
    app.setDesktopFileName("hwbench")
    icon = app_icon()
    if icon is not None:
        app.setWindowIcon(icon)
    return app


def app_icon():
    """The hwbench icon from ``resources/icons`` (every PNG size), or ``None`` when none is found."""
    from PySide6.QtGui import QIcon

    from hwbench_gui.engine.paths import resources_dir

    files = sorted((resources_dir() / "icons").glob("hwbench-*.png"))
    if not files:
        return None
    icon = QIcon()
    for path in files:
        icon.addFile(str(path))
    return icon


def build_window(settings=None, start_sampler: bool = True, build_hidden_tabs: bool = True):
    """Create the main window with its context; ``settings`` defaults to the user's QSettings.
    ``build_hidden_tabs``: build the tabs not shown yet while the window is idle."""
    from PySide6.QtCore import QSettings

    from hwbench_gui.engine.paths import results_dir
    from hwbench_gui.ui.context import AppContext
    from hwbench_gui.ui.main_window import MainWindow
    from hwbench_gui.ui.theme import apply_theme

    settings = settings if settings is not None else QSettings()
    from PySide6.QtWidgets import QApplication

    apply_theme(QApplication.instance(), str(settings.value("theme", "system")))
    context = AppContext(settings=settings, results_dir=results_dir())
    return MainWindow(context, start_sampler=start_sampler, build_hidden_tabs=build_hidden_tabs)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    setup_log_file()
    app = create_app(argv)
    window = build_window()
    if os.environ.get(EXIT_AFTER_SHOW_ENV):
        from PySide6.QtCore import QTimer

        def report() -> None:
            print(f"shown {time.perf_counter() - _T0:.3f}", flush=True)
            QTimer.singleShot(0, window.close)

        window.ready.connect(report)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
