"""The what-ifs of a ``datapath.analyze`` result as bars: every configuration the analyzer measured
end to end against the default configuration's figure (a line) and the slowest stage alone (a
dashed line), the best one highlighted. Painted with QPainter from the palette."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from hwbench_gui.ui.datapath_chain import TextItem
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


#: Height of one bar's row, and of the heading above the rows.
ROW_PX = 22
HEADING_PX = 26
HEADING = "What-ifs measured end to end (images/s)"


def value_text(row: Row, first: bool) -> str:
    return f"{row.rate:,.0f}" + (f" ×{row.gain:.2f}" if row.gain and not first else "")


class WhatIfBars(QWidget):
    """Shows the what-ifs of one datapath document (:meth:`set_document`): one row per
    configuration, as tall as its rows; labels and values take the width their text needs (a label
    longer than its column ends in "…", the whole label in the tooltip)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._default: float | None = None
        self._slowest: float | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setMinimumWidth(320)
        self.setFixedHeight(HEADING_PX + 2 * ROW_PX)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(560, self.height())

    def set_document(self, document: dict[str, Any] | None) -> None:
        self._rows, self._default, self._slowest = what_if_rows(document) if document else ([], None, None)
        self.setFixedHeight(HEADING_PX + max(2, len(self._rows)) * ROW_PX + 4)
        self.setToolTip("\n".join(f"{r.label}: {r.rate:,.0f} images/s" if r.rate is not None else
                                   f"{r.label}: {r.reason}" for r in self._rows))
        self.update()

    def rows(self) -> list[Row]:
        return list(self._rows)

    def _columns(self) -> tuple[float, float, float]:
        """(label column width, bar start, bar end): the values' column is as wide as the widest value."""
        bold = QFont(self.font())
        bold.setBold(True)
        value_w = max([QFontMetrics(bold).horizontalAdvance(value_text(r, i == 0)) for i, r in enumerate(self._rows)
                       if r.rate is not None] or [0]) + 8
        label_w = min(260.0, self.width() * 0.4)
        left = 8 + label_w + 6
        return label_w, left, max(left + 20, self.width() - 8 - value_w)

    def text_items(self) -> list[TextItem]:
        """Every text as drawn, in widget coordinates."""
        bold = QFont(self.font())
        bold.setBold(True)
        items = [TextItem(QRectF(8, 4, self.width() - 16, 20), HEADING, bold, int(Qt.AlignLeft | Qt.AlignVCenter))]
        if len(self._rows) <= 1:
            items.append(TextItem(QRectF(8, HEADING_PX, self.width() - 16, ROW_PX),
                                  "No what-if was measured in this run.", QFont(self.font()),
                                  int(Qt.AlignLeft | Qt.AlignVCenter)))
            return items
        label_w, left, right = self._columns()
        top = max(r.rate for r in self._rows if r.rate) if any(r.rate for r in self._rows) else 1.0
        top = max([top] + [v for v in (self._default, self._slowest) if v]) * 1.05
        for i, row in enumerate(self._rows):
            y = HEADING_PX + i * ROW_PX
            font = bold if row.best else QFont(self.font())
            metrics = QFontMetrics(font)
            label = metrics.elidedText(row.label, Qt.ElideRight, int(label_w))
            items.append(TextItem(QRectF(8, y, label_w, ROW_PX), label, font, int(Qt.AlignRight | Qt.AlignVCenter)))
            if row.rate is None:
                room = self.width() - 8 - left
                reason = QFontMetrics(self.font()).elidedText(row.reason or "not measured", Qt.ElideRight, int(room))
                items.append(TextItem(QRectF(left, y, room, ROW_PX), reason, QFont(self.font()),
                                      int(Qt.AlignLeft | Qt.AlignVCenter), muted=True))
                continue
            end = left + (right - left) * row.rate / top
            text = value_text(row, i == 0)
            items.append(TextItem(QRectF(end + 4, y, metrics.horizontalAdvance(text) + 2, ROW_PX), text, font,
                                  int(Qt.AlignLeft | Qt.AlignVCenter)))
        return items

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.Base))
        text, mid = palette.color(QPalette.Text), palette.color(QPalette.Mid)
        if len(self._rows) > 1:
            _, left, right = self._columns()
            top = max([r.rate for r in self._rows if r.rate] + [v for v in (self._default, self._slowest) if v]) * 1.05
            for i, row in enumerate(self._rows):
                if row.rate is None:
                    continue
                y = HEADING_PX + i * ROW_PX
                colour = QColor(OK_COLOR) if row.best else (mid if i == 0 else palette.color(QPalette.Highlight))
                painter.fillRect(QRectF(left, y + 4, (right - left) * row.rate / top, ROW_PX - 8), colour)
            # the lines end above the unmeasured rows (listed last), whose reasons cross the bars' room
            bottom = HEADING_PX + sum(r.rate is not None for r in self._rows) * ROW_PX
            for value, style in ((self._default, Qt.SolidLine), (self._slowest, Qt.DashLine)):
                if value:
                    x = left + (right - left) * value / top
                    painter.setPen(QPen(text, 1, style))
                    painter.drawLine(int(x), HEADING_PX - 2, int(x), int(bottom))
        for item in self.text_items():
            painter.setFont(item.font)
            painter.setPen(mid if item.muted else text)
            painter.drawText(item.rect, item.flags, item.text)
        painter.end()
