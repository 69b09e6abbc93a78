"""Demos tab: one page per demo in a QTabWidget.

A page is ``Page(context, parent)`` with an optional ``shutdown()``; add one with a line in
:data:`PAGES`. A page is built (its module imported) the first time it is shown, one page per
event-loop turn rather than all three at once, so showing the tab does not stall the window; a page
that fails to build shows why instead of taking the tab down.
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


class _PageHolder(QWidget):
    """Holds a demo page's place in the tabs until it is first shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.page: QWidget | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)


class DemosTab(QWidget):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.tabs = QTabWidget(self)
        #: The pages built so far, by title (:meth:`page` builds one).
        self.pages: dict[str, QWidget] = {}
        self._holders: dict[str, _PageHolder] = {}
        for title, _module, _class in PAGES:
            self._holders[title] = _PageHolder(self.tabs)
            self.tabs.addTab(self._holders[title], title)
        self.tabs.currentChanged.connect(lambda index: self.page(self.tabs.tabText(index)))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.page(self.tabs.tabText(self.tabs.currentIndex()))

    def page(self, title: str) -> QWidget:
        """The demo page ``title``, built now if it has not been (``KeyError`` for a title not listed)."""
        holder = self._holders[title]
        if holder.page is None:
            holder.page = self._build(title)
            holder.layout().addWidget(holder.page)
            holder.page.show()
            self.pages[title] = holder.page
        return holder.page

    def _build(self, title: str) -> QWidget:
        module_name, class_name = next((m, c) for t, m, c in PAGES if t == title)
        try:
            return getattr(importlib.import_module(module_name), class_name)(self.context, None)
        except Exception as exc:  # one broken demo must not hide the others
            log.exception("demo page %s failed to build", title)
            page = QLabel(f"The {title} demo could not start:\n{type(exc).__name__}: {exc}\n\n"
                          f"{traceback.format_exc(limit=4)}")
            page.setWordWrap(True)
            return page

    def shutdown(self) -> None:
        """Stop the built pages' workers and timers (the window calls this from ``closeEvent``)."""
        for page in self.pages.values():
            stop = getattr(page, "shutdown", None)
            if callable(stop):
                stop()
