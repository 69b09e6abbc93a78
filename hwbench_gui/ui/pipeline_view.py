"""The Data path page of a ``datapath.analyze`` result: the chain of boxes disk → RAM → CPU
decode/augment → PCIe → GPU, each with its standalone rate, the bottleneck highlighted, the
end-to-end rate and verdict below and the advice beside it; under it the what-ifs measured end to
end as bars (:mod:`hwbench_gui.ui.datapath_whatifs`) and the best configuration found as code with
a copy button. Painted with QPainter from the palette, so it reads on light and dark themes alike."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout,
                               QWidget)

from hwbench_gui.engine.datapath.stages import STAGES
from hwbench_gui.ui.datapath_whatifs import WhatIfBars
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR

BENCH_ID = "datapath.analyze"

#: (box title, stage key for the rate, stage keys of its sub-lines); the chain's order. Labels come
#: from the stage declarations (engine.datapath.stages.STAGES).
BOXES = (
    ("Disk", "disk_cold", ("disk_cold",)),
    ("RAM (page cache)", "disk_cached", ("disk_cached",)),
    ("CPU decode/augment", "cpu_n", ("decode_1", "decode_n", "decode_all", "augment_1")),
    ("PCIe copy", "transfer", ("transfer",)),
    ("GPU compute", "compute", ("compute", "compute_channels_last", "compute_bf16")),
)

#: Which box a verdict's bottleneck lights up.
BOTTLENECK_BOX = {"disk": None, "decode": "cpu_n", "augment": "cpu_n", "transfer": "transfer", "compute": "compute"}


@dataclass
class Box:
    title: str
    key: str
    rate: float | None
    lines: list[str]
    bottleneck: bool


def format_rate(rate: float | None) -> str:
    if rate is None:
        return "not measured"
    return f"{rate:,.0f} img/s" if rate >= 10 else f"{rate:.2g} img/s"


def boxes_of(document: dict[str, Any]) -> list[Box]:
    """The chain's boxes with rates and sub-lines from a result document's details."""
    details = document.get("details") or {}
    stages = {s.get("key"): s for s in details.get("stages") or [] if isinstance(s, dict)}
    context = details.get("context") or {}
    limiting = details.get("limiting_stage")
    bottleneck = details.get("bottleneck")
    lit = limiting if bottleneck == "disk" or bottleneck == "interference" else BOTTLENECK_BOX.get(bottleneck)
    device = context.get("device")
    boxes = []
    for title, key, subs in BOXES:
        stage = stages.get(key) or {}
        rate = stage.get("rate_images_per_s")
        if key == "transfer" and device == "cpu":
            title = "Collate (no copy: CPU)"
        if key == "compute" and device == "cpu":
            title = "CPU compute"
        lines = [f"{STAGES[sub].label}: {format_rate((stages.get(sub) or {}).get('rate_images_per_s'))}"
                 for sub in subs if sub != key and sub in stages]  # what-ifs only where measured
        if key == "cpu_n" and context.get("workers") is not None:
            workers = context["workers"]
            lines = [f"{workers} loader worker{'' if workers == 1 else 's'}", *lines]
        if rate is None and stage.get("reason"):
            lines.append(str(stage["reason"]))
        boxes.append(Box(title, key, rate, lines, key == lit))
    return boxes


def best_found_code(document: dict[str, Any]) -> tuple[str, str]:
    """(heading, code) of the best configuration the document's run measured ('' code when none)."""
    best = (document.get("details") or {}).get("best_found") or {}
    code = best.get("code") if isinstance(best.get("code"), str) else ""
    rate = best.get("rate_images_per_s")
    if not code or not isinstance(rate, (int, float)):
        return "No best configuration recorded (a result of an older version).", ""
    gain = best.get("gain")
    head = f"Best configuration measured: {format_rate(rate)}"
    head += f" (×{gain:.2f} the default)" if isinstance(gain, (int, float)) else ""
    share = best.get("of_slowest_stage")
    head += f", {share:.0%} of its slowest stage alone" if isinstance(share, (int, float)) else ""
    return head + f" — {best.get('describe', '')}", code


class PipelineView(QWidget):
    """The Data path page of one datapath document (:meth:`set_document`): chain, what-ifs, code."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._document: dict[str, Any] | None = None
        self.chain = ChainView(self)
        self.what_ifs = WhatIfBars(self)
        self.best_label = QLabel(self)
        self.best_label.setWordWrap(True)
        self.code = QPlainTextEdit(self)
        self.code.setReadOnly(True)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.copy_button = QPushButton("Copy code", self)
        self.copy_button.clicked.connect(self.copy_code)
        code_box = QVBoxLayout()
        head = QHBoxLayout()
        head.addWidget(self.best_label, 1)
        head.addWidget(self.copy_button)
        code_box.addLayout(head)
        code_box.addWidget(self.code, 1)
        lower = QHBoxLayout()
        lower.addWidget(self.what_ifs, 1)
        lower.addLayout(code_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chain, 3)
        layout.addLayout(lower, 2)
        self.set_document(None)

    def set_document(self, document: dict[str, Any] | None) -> None:
        self._document = document
        self.chain.set_document(document)
        self.what_ifs.set_document(document)
        head, code = best_found_code(document) if document else ("", "")
        self.best_label.setText(head)
        self.code.setPlainText(code)
        self.copy_button.setEnabled(bool(code))

    def document(self) -> dict[str, Any] | None:
        return self._document

    def boxes(self) -> list[Box]:
        return self.chain.boxes()

    def box_texts(self) -> list[list[str]]:
        return self.chain.box_texts()

    def copy_code(self) -> None:
        """Put the best configuration's code on the clipboard."""
        QGuiApplication.clipboard().setText(self.code.toPlainText())


class ChainView(QWidget):
    """The chain of one datapath document (:meth:`set_document`); empty text until one is given."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._document: dict[str, Any] | None = None
        self._boxes: list[Box] = []
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumSize(640, 300)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(1100, 400)

    def set_document(self, document: dict[str, Any] | None) -> None:
        self._document = document
        self._boxes = boxes_of(document) if document else []
        self.update()

    def document(self) -> dict[str, Any] | None:
        return self._document

    def boxes(self) -> list[Box]:
        """The boxes as drawn (for tests and scripts)."""
        return list(self._boxes)

    def box_texts(self) -> list[list[str]]:
        """Every text drawn in each box, top to bottom."""
        return [[b.title, format_rate(b.rate), *b.lines] + (["BOTTLENECK"] if b.bottleneck else [])
                for b in self._boxes]

    # --- painting -------------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.Base))
        text = palette.color(QPalette.Text)
        if not self._document:
            painter.setPen(text)
            painter.drawText(self.rect(), Qt.AlignCenter, "Select a datapath.analyze result to see its pipeline.")
            return
        details = self._document.get("details") or {}
        margin = 12.0
        advice_w = max(240.0, self.width() * 0.3)
        chain = QRectF(margin, margin, self.width() - advice_w - 3 * margin, self.height() - 2 * margin)
        self._paint_chain(painter, chain, palette)
        self._paint_advice(painter, QRectF(chain.right() + margin, margin, advice_w, chain.height()), details,
                           palette)
        painter.end()

    def _paint_chain(self, painter: QPainter, area: QRectF, palette: QPalette) -> None:
        text = palette.color(QPalette.Text)
        mid = palette.color(QPalette.Mid)
        base = palette.color(QPalette.AlternateBase)
        hot = QColor(ERROR_COLOR)
        details = (self._document or {}).get("details") or {}
        n = len(self._boxes)
        gap = 26.0
        box_w = (area.width() - gap * (n - 1)) / n
        box_h = min(190.0, area.height() * 0.55)
        top = area.top() + 22
        bold = QFont(self.font())
        bold.setBold(True)
        big = QFont(bold)
        big.setPointSizeF(self.font().pointSizeF() * 1.25)
        rates = [b.rate for b in self._boxes if b.rate]
        top_rate = max(rates) if rates else 1.0

        # Grow the boxes to fit the tallest box's lines (what-if lines add some), within reason.
        painter.setFont(self.font())
        for box in self._boxes:
            needed = 78.0 + 12.0 + sum(painter.boundingRect(QRectF(0, 0, box_w - 16, 60), Qt.AlignHCenter |
                                                            Qt.TextWordWrap, line).height() + 2 for line in box.lines)
            box_h = max(box_h, min(needed, area.height() * 0.75))
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(QRectF(area.left(), area.top(), area.width(), 20), Qt.AlignLeft | Qt.AlignVCenter,
                         "Standalone rate of each stage (images/s)")
        for i, box in enumerate(self._boxes):
            rect = QRectF(area.left() + i * (box_w + gap), top, box_w, box_h)
            fill = QColor(hot) if box.bottleneck else QColor(base)
            if box.bottleneck:
                fill.setAlpha(45)
            painter.setBrush(fill)
            painter.setPen(QPen(hot if box.bottleneck else mid, 3 if box.bottleneck else 1))
            painter.drawRoundedRect(rect, 8, 8)
            inner = rect.adjusted(8, 6, -8, -6)
            painter.setPen(text)
            painter.setFont(bold)
            painter.drawText(QRectF(inner.left(), inner.top(), inner.width(), 36), Qt.AlignHCenter | Qt.TextWordWrap,
                             box.title)
            painter.setFont(big)
            painter.setPen(hot if box.bottleneck else text)
            painter.drawText(QRectF(inner.left(), inner.top() + 38, inner.width(), 24), Qt.AlignHCenter,
                             format_rate(box.rate))
            # A bar on a log scale: rates span four orders of magnitude between disk and collate.
            if box.rate:
                frac = max(0.04, math.log10(1 + box.rate) / math.log10(1 + top_rate))
                bar = QRectF(inner.left(), inner.top() + 66, inner.width() * frac, 6)
                painter.fillRect(bar, hot if box.bottleneck else QColor(OK_COLOR))
            painter.setFont(self.font())
            painter.setPen(text)
            y = inner.top() + 78
            for line in box.lines:
                used = painter.boundingRect(QRectF(inner.left(), y, inner.width(), 60),
                                            Qt.AlignHCenter | Qt.TextWordWrap, line)
                painter.drawText(used, Qt.AlignHCenter | Qt.TextWordWrap, line)
                y = used.bottom() + 2
            if box.bottleneck:
                painter.setFont(bold)
                painter.setPen(hot)
                painter.drawText(QRectF(rect.left(), rect.bottom() + 2, rect.width(), 18), Qt.AlignHCenter,
                                 "BOTTLENECK")
            if i < n - 1:
                self._arrow(painter, QPointF(rect.right() + 3, rect.center().y()),
                            QPointF(rect.right() + gap - 3, rect.center().y()), mid)

        # End-to-end rate against the chain, then the verdict text.
        figure = (self._document or {}).get("figure") or {}
        e2e = figure.get("value")
        y = top + box_h + 26
        painter.setFont(big)
        painter.setPen(text)
        wait = details.get("data_wait_fraction")
        util = details.get("gpu_util_percent")
        summary = f"End-to-end training: {format_rate(e2e)}"
        if isinstance(wait, (int, float)):
            summary += f"  ·  waited for data {wait:.0%} of the time"
        if isinstance(util, (int, float)):
            summary += f"  ·  GPU busy {util:.0f} %"
        painter.drawText(QRectF(area.left(), y, area.width(), 24), Qt.AlignLeft | Qt.AlignVCenter, summary)
        painter.setFont(bold)
        painter.setPen(hot)
        name = details.get("bottleneck_name") or details.get("bottleneck") or "?"
        painter.drawText(QRectF(area.left(), y + 26, area.width(), 20), Qt.AlignLeft | Qt.AlignVCenter,
                         f"Verdict: {name}")
        painter.setFont(self.font())
        painter.setPen(text)
        painter.drawText(QRectF(area.left(), y + 48, area.width(), area.bottom() - y - 48),
                         Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, str(details.get("verdict") or ""))

    def _paint_advice(self, painter: QPainter, area: QRectF, details: dict[str, Any], palette: QPalette) -> None:
        text = palette.color(QPalette.Text)
        painter.setPen(QPen(palette.color(QPalette.Mid), 1))
        painter.setBrush(palette.color(QPalette.AlternateBase))
        painter.drawRoundedRect(area, 8, 8)
        inner = area.adjusted(10, 8, -10, -8)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(QRectF(inner.left(), inner.top(), inner.width(), 20), Qt.AlignLeft, "What to change")
        y = inner.top() + 26
        advice = details.get("advice") or []
        if not advice:
            painter.setFont(self.font())
            painter.drawText(QRectF(inner.left(), y, inner.width(), 40), Qt.TextWordWrap, "No advice for this run.")
        for item in advice:
            if y > inner.bottom() - 20:
                break
            gain = item.get("expected_gain")
            expected = item.get("expected_images_per_s")
            head = f"• {item.get('action', '')}"
            if isinstance(gain, (int, float)) and isinstance(expected, (int, float)):
                head += f"  → {format_rate(expected)} (×{gain:.1f})"
            painter.setFont(bold)
            rect = painter.boundingRect(QRectF(inner.left(), y, inner.width(), 200), Qt.TextWordWrap, head)
            painter.drawText(rect, Qt.TextWordWrap, head)
            y = rect.bottom() + 2
            painter.setFont(self.font())
            rect = painter.boundingRect(QRectF(inner.left() + 10, y, inner.width() - 10, 200), Qt.TextWordWrap,
                                        str(item.get("detail", "")))
            painter.drawText(rect, Qt.TextWordWrap, str(item.get("detail", "")))
            y = rect.bottom() + 8

    @staticmethod
    def _arrow(painter: QPainter, start: QPointF, end: QPointF, color: QColor) -> None:
        painter.setPen(QPen(color, 2))
        painter.drawLine(start, end)
        path = QPainterPath()
        path.moveTo(end)
        path.lineTo(end.x() - 8, end.y() - 5)
        path.lineTo(end.x() - 8, end.y() + 5)
        path.closeSubpath()
        painter.fillPath(path, color)
