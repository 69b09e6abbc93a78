"""A one-line label that never widens its layout: a text longer than its room ends in "…", and the
whole text is in the tooltip.

A plain ``QLabel`` asks for the width of its whole text as its minimum, so one long line (a saved
result's path) pushes a splitter's other side narrower every time it is shown.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

#: The narrowest an elided label asks to be.
MIN_WIDTH_PX = 60


class ElidedLabel(QLabel):
    """``text()`` is the whole text; what is painted is elided at the right to the label's width."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.PlainText)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.setText(text)

    def text(self) -> str:  # noqa: D102 (QLabel's name: the whole text, not the painted one)
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 (QLabel's name)
        self._full = str(text)
        self._fit()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(MIN_WIDTH_PX, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(MIN_WIDTH_PX, super().sizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.ElideRight, max(0, self.contentsRect().width()))
        if shown != super().text():
            super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")
