"""Demos tab: one page per demo in a QTabWidget.

A page is ``Page(context, parent)`` with an optional ``shutdown()``; add one with a line in
:data:`PAGES`. Page modules are imported when the tab is built; a page that fails to build shows
why instead of taking the tab down.
"""

from __future__ import annotations

import importlib
import logging
import traceback

from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from hwbench_gui.ui.context import AppContext

log = logging.getLogger(__name__)

#: (tab title, module, class) of each demo page, in tab order.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("Snake", "hwbench_gui.ui.demos.snake.page", "SnakePage"),
    ("Motion transfer", "hwbench_gui.ui.demos.motion.page", "MotionPage"),
    ("Tracking", "hwbench_gui.ui.demos.tracking.page", "TrackingPage"),
)


class DemosTab(QWidget):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.tabs = QTabWidget(self)
        self.pages: dict[str, QWidget] = {}
        for title, module_name, class_name in PAGES:
            try:
                page = getattr(importlib.import_module(module_name), class_name)(context, self.tabs)
            except Exception as exc:  # one broken demo must not hide the others
                log.exception("demo page %s failed to build", title)
                page = QLabel(f"The {title} demo could not start:\n{type(exc).__name__}: {exc}\n\n"
                              f"{traceback.format_exc(limit=4)}")
                page.setWordWrap(True)
            self.pages[title] = page
            self.tabs.addTab(page, title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    def shutdown(self) -> None:
        """Stop every page's workers and timers (the window calls this from ``closeEvent``)."""
        for page in self.pages.values():
            stop = getattr(page, "shutdown", None)
            if callable(stop):
                stop()
