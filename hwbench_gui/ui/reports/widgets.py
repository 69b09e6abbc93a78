"""Small widget helpers the Reports views share."""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QLayout, QPushButton


def button(text: str, slot: Callable[[], object], layout: QLayout) -> QPushButton:
    """A push button added to ``layout`` that calls ``slot()`` (without Qt's ``checked`` argument)."""
    widget = QPushButton(text)
    widget.clicked.connect(lambda _checked=False: slot())
    layout.addWidget(widget)
    return widget
