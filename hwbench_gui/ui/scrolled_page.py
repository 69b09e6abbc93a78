"""A page that scrolls on a short screen instead of squeezing its plots and tables to nothing."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget


def scroll_page(owner: QWidget, page: QWidget) -> QScrollArea:
    """Lay ``page`` into ``owner`` inside a frameless scroll area that follows the owner's width; returns it."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(page)
    outer = QVBoxLayout(owner)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(scroll)
    return scroll
