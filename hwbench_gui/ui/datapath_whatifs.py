"""The what-ifs of a ``datapath.analyze`` result as bars: every configuration the analyzer measured
end to end against the default configuration's figure (a line) and the slowest stage alone (a
dashed line), the best one highlighted. Painted with QPainter from the palette."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from hwbench_gui.ui.theme import OK_COLOR


@dataclass
class Row:
    label: str
    rate: float | None
    gain: float | None  # rate / the default's end-to-end rate
    best: bool
    reason: str | None = None


def what_if_rows(document: dict[str, Any]) -> tuple[list[Row], float | None, float | None]:
    """(rows: the default first, then the what-ifs fastest first and the unmeasured last; the
    default's end-to-end rate; the slowest stage alone) from a result document."""
    details = document.get("details") or {}
    figure = (document.get("figure") or {}).get("value")
    default = figure if isinstance(figure, (int, float)) else None
    best_key = (details.get("best_found") or {}).get("key")
    rows = [Row("default configuration", default, 1.0 if default else None, best_key == "default")]
    tried = [t for t in details.get("tried") or [] if isinstance(t, dict)]
    measured = [t for t in tried if isinstance(t.get("rate_images_per_s"), (int, float))]
    for t in sorted(measured, key=lambda t: -t["rate_images_per_s"]):
        rate = float(t["rate_images_per_s"])
        rows.append(Row(_label(t, details), rate, rate / default if default else None, t.get("key") == best_key))
    for t in tried:
        if t not in measured:
            rows.append(Row(_label(t, details), None, None, False, str(t.get("reason") or "not measured")))
    consistency = details.get("consistency") or {}
    slowest = consistency.get("slowest_alone_rate", consistency.get("slowest_rate"))
    return rows, default, slowest if isinstance(slowest, (int, float)) else None


def _label(tried: dict[str, Any], details: dict[str, Any]) -> str:
    """The change from the default in words (the advice line's action), else the key."""
    for advice in details.get("advice") or []:
        if isinstance(advice, dict) and advice.get("measured") and advice.get("expected_images_per_s") == \
                tried.get("rate_images_per_s") and advice.get("action"):
            return str(advice["action"])
    return str(tried.get("key", "?"))


class WhatIfBars(QWidget):
    """Shows the what-ifs of one datapath document (:meth:`set_document`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._default: float | None = None
        self._slowest: float | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumSize(320, 160)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(560, 260)

    def set_document(self, document: dict[str, Any] | None) -> None:
        self._rows, self._default, self._slowest = what_if_rows(document) if document else ([], None, None)
        self.setMinimumHeight(40 + 20 * len(self._rows))
        self.update()

    def rows(self) -> list[Row]:
        return list(self._rows)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.Base))
        text, mid = palette.color(QPalette.Text), palette.color(QPalette.Mid)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(QRectF(8, 4, self.width() - 16, 20), Qt.AlignLeft | Qt.AlignVCenter,
                         "What-ifs measured end to end (images/s)")
        if not self._rows or len(self._rows) == 1:
            painter.setFont(self.font())
            painter.drawText(QRectF(8, 28, self.width() - 16, 40), Qt.TextWordWrap,
                             "No what-if was measured in this run.")
            return
        rates = [r.rate for r in self._rows if r.rate] + [v for v in (self._default, self._slowest) if v]
        top = max(rates) * 1.05
        label_w = min(260.0, self.width() * 0.42)
        left, right = 8 + label_w + 6, self.width() - 70.0
        row_h = max(14.0, min(24.0, (self.height() - 34) / len(self._rows)))
        painter.setFont(self.font())
        for i, row in enumerate(self._rows):
            y = 28 + i * row_h
            painter.setPen(text)
            painter.setFont(bold if row.best else self.font())
            painter.drawText(QRectF(8, y, label_w, row_h), Qt.AlignRight | Qt.AlignVCenter,
                             painter.fontMetrics().elidedText(row.label, Qt.ElideRight, int(label_w)))
            if row.rate is None:
                painter.setPen(mid)
                painter.drawText(QRectF(left, y, right - left + 60, row_h), Qt.AlignLeft | Qt.AlignVCenter,
                                 row.reason or "not measured")
                continue
            width = (right - left) * row.rate / top
            colour = QColor(OK_COLOR) if row.best else (mid if i == 0 else palette.color(QPalette.Highlight))
            painter.fillRect(QRectF(left, y + 3, width, row_h - 6), colour)
            painter.setPen(text)
            gain = f" ×{row.gain:.2f}" if row.gain and i else ""
            painter.drawText(QRectF(left + width + 4, y, 120, row_h), Qt.AlignLeft | Qt.AlignVCenter,
                             f"{row.rate:,.0f}{gain}")
        bottom = 28 + len(self._rows) * row_h
        for value, style in ((self._default, Qt.SolidLine), (self._slowest, Qt.DashLine)):
            if value:
                x = left + (right - left) * value / top
                painter.setPen(QPen(text, 1, style))
                painter.drawLine(int(x), 26, int(x), int(bottom))
