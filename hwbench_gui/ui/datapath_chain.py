"""The chain of a ``datapath.analyze`` result: disk → RAM → CPU decode/augment → copy → compute,
one card per stage with its standalone rate, the bottleneck highlighted.

The cards are laid out for the width there is (:func:`chain_layout`): a card is never narrower
than its widest number or word, so when five do not fit in a row they wrap into rows, and the
widget asks for the height that takes. Painting only draws the laid-out texts, which tests read
back (:meth:`ChainView.text_items`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from hwbench_gui.engine.datapath.stages import STAGES
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR

#: (card title, stage key for the rate, stage keys of its sub-lines); the chain's order. Labels come
#: from the stage declarations (engine.datapath.stages.STAGES).
BOXES = (
    ("Disk", "disk_cold", ("disk_cold",)),
    ("RAM (page cache)", "disk_cached", ("disk_cached",)),
    ("CPU decode/augment", "cpu_n", ("decode_1", "decode_n", "decode_all", "augment_1")),
    ("PCIe copy", "transfer", ("transfer",)),
    ("GPU compute", "compute", ("compute", "compute_channels_last", "compute_bf16", "compute_batch2x")),
)
#: Card titles where the CPU trains: no copy to a device, no GPU.
CPU_TITLES = {"transfer": "Collate", "compute": "CPU compute"}

#: Which card a verdict's bottleneck lights up.
BOTTLENECK_BOX = {"disk": None, "decode": "cpu_n", "augment": "cpu_n", "transfer": "transfer", "compute": "compute",
                  "launch": "compute"}

HEADING = "Standalone rate of each stage (images/s)"
GAP_PX = 26.0  # between cards: room for the arrow
PAD_PX = 8.0  # inside a card
MIN_CARD_PX = 100.0
WRAP = Qt.AlignHCenter | Qt.TextWordWrap


@dataclass
class Box:
    title: str
    key: str
    rate: float | None
    lines: list[str]
    bottleneck: bool


@dataclass
class TextItem:
    """One text as drawn: where, which font, how aligned, and its colour (the bottleneck's, or muted)."""

    rect: QRectF
    text: str
    font: QFont
    flags: int
    hot: bool = False
    muted: bool = False


def format_rate(rate: float | None) -> str:
    if rate is None:
        return "not measured"
    return f"{rate:,.0f} img/s" if rate >= 10 else f"{rate:.2g} img/s"


def boxes_of(document: dict[str, Any]) -> list[Box]:
    """The chain's cards with rates and sub-lines from a result document's details."""
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
        if device == "cpu":
            title = CPU_TITLES.get(key, title)
        lines = [f"{STAGES[sub].label}: {format_rate((stages.get(sub) or {}).get('rate_images_per_s'))}"
                 for sub in subs if sub != key and sub in stages]  # what-ifs only where measured
        if key == "cpu_n" and context.get("workers") is not None:
            workers = context["workers"]
            lines = [f"{workers} loader worker{'' if workers == 1 else 's'}", *lines]
        if rate is None and stage.get("reason"):
            lines.append(str(stage["reason"]))
        boxes.append(Box(title, key, rate, lines, key == lit))
    return boxes


def _fonts(base: QFont) -> tuple[QFont, QFont, QFont]:
    bold = QFont(base)
    bold.setBold(True)
    big = QFont(bold)
    big.setPointSizeF(base.pointSizeF() * 1.25)
    return base, bold, big


def _wrapped_height(font: QFont, width: float, text: str) -> float:
    return float(QFontMetrics(font).boundingRect(QRect(0, 0, max(1, int(width)), 100000), WRAP, text).height())


def card_min_width(boxes: list[Box], base: QFont) -> float:
    """The narrowest a card may be: its widest rate, title word or sub-line word, and padding."""
    normal, bold, big = _fonts(base)
    widths = [MIN_CARD_PX - 2 * PAD_PX]
    for box in boxes:
        widths.append(QFontMetrics(big).horizontalAdvance(format_rate(box.rate)))
        widths += [QFontMetrics(bold).horizontalAdvance(w) for w in box.title.split()]
        widths += [QFontMetrics(normal).horizontalAdvance(w) for line in box.lines for w in line.split()]
    return math.ceil(max(widths)) + 2 * PAD_PX + 2


def chain_layout(boxes: list[Box], width: float, base: QFont) -> tuple[list[TextItem], list[tuple[QRectF, Box]],
                                                                      list[tuple[QPointF, QPointF]], float]:
    """(texts, cards, arrows, height) of the chain drawn ``width`` pixels wide: as many cards per
    row as fit at :func:`card_min_width`, the rows balanced (five cards: 5, else 3 + 2, ...)."""
    normal, bold, big = _fonts(base)
    texts: list[TextItem] = []
    heading_h = _wrapped_height(bold, width, HEADING)
    texts.append(TextItem(QRectF(0, 0, width, heading_h), HEADING, bold, int(Qt.AlignLeft | Qt.TextWordWrap)))
    if not boxes:
        return texts, [], [], heading_h
    min_w = card_min_width(boxes, base)
    columns = max(1, min(len(boxes), int((width + GAP_PX) // (min_w + GAP_PX))))
    rows = math.ceil(len(boxes) / columns)
    columns = math.ceil(len(boxes) / rows)
    card_w = max(min_w, (width - GAP_PX * (columns - 1)) / columns)
    inner_w = card_w - 2 * PAD_PX
    rate_h = float(QFontMetrics(big).height())
    flag_h = float(QFontMetrics(bold).height()) + 4
    cards: list[tuple[QRectF, Box]] = []
    arrows: list[tuple[QPointF, QPointF]] = []
    y = heading_h + 6
    for row in range(rows):
        members = boxes[row * columns:(row + 1) * columns]

        def content_height(box: Box) -> float:
            lines = sum(_wrapped_height(normal, inner_w, line) + 2 for line in box.lines)
            return _wrapped_height(bold, inner_w, box.title) + 4 + rate_h + 16 + lines

        card_h = max(content_height(box) for box in members) + 2 * 6
        for i, box in enumerate(members):
            rect = QRectF(i * (card_w + GAP_PX), y, card_w, card_h)
            cards.append((rect, box))
            top, left = rect.top() + 6, rect.left() + PAD_PX
            title_h = _wrapped_height(bold, inner_w, box.title)
            texts.append(TextItem(QRectF(left, top, inner_w, title_h), box.title, bold, int(WRAP)))
            top += title_h + 4
            texts.append(TextItem(QRectF(left, top, inner_w, rate_h), format_rate(box.rate), big,
                                  int(Qt.AlignHCenter), box.bottleneck))
            top += rate_h + 16  # the bar sits in the gap
            for line in box.lines:
                line_h = _wrapped_height(normal, inner_w, line)
                texts.append(TextItem(QRectF(left, top, inner_w, line_h), line, normal, int(WRAP)))
                top += line_h + 2
            if box.bottleneck:
                texts.append(TextItem(QRectF(rect.left(), rect.bottom() + 2, card_w, flag_h - 4), "BOTTLENECK", bold,
                                      int(Qt.AlignHCenter), True))
            if i < len(members) - 1:
                arrows.append((QPointF(rect.right() + 3, rect.center().y()),
                               QPointF(rect.right() + GAP_PX - 3, rect.center().y())))
        y += card_h + flag_h + 4
    return texts, cards, arrows, y


class ChainView(QWidget):
    """The chain of one datapath document (:meth:`set_document`); as tall as its width needs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._document: dict[str, Any] | None = None
        self._boxes: list[Box] = []
        self._laid_out: tuple[float, list[TextItem], list, list] | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(1000, int(self._height_for(max(self.width(), 1000))))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(int(card_min_width(self._boxes, self.font())), 40)

    def set_document(self, document: dict[str, Any] | None) -> None:
        self._document = document
        self._boxes = boxes_of(document) if document else []
        self._laid_out = None
        self._fit_height()
        self.update()

    def document(self) -> dict[str, Any] | None:
        return self._document

    def boxes(self) -> list[Box]:
        """The cards as drawn (for tests and scripts)."""
        return list(self._boxes)

    def box_texts(self) -> list[list[str]]:
        """Every text drawn in each card, top to bottom."""
        return [[b.title, format_rate(b.rate), *b.lines] + (["BOTTLENECK"] if b.bottleneck else [])
                for b in self._boxes]

    def text_items(self) -> list[TextItem]:
        """The texts as laid out for the current width (widget coordinates)."""
        return list(self._layout()[1])

    def _layout(self) -> tuple[float, list[TextItem], list, list]:
        width = float(max(1, self.width()))
        if self._laid_out is None or self._laid_out[0] != width:
            if self._boxes:
                texts, cards, arrows, height = chain_layout(self._boxes, width, self.font())
            else:
                texts, cards, arrows, height = [], [], [], 40.0
            self._laid_out = (width, texts, cards, arrows, height)
        return self._laid_out[:4]

    def _height_for(self, width: int) -> float:
        if not self._boxes:
            return 40.0
        return chain_layout(self._boxes, float(width), self.font())[3]

    def _fit_height(self) -> None:
        self._layout()
        height = math.ceil(self._laid_out[4]) + 2
        if self.height() != height or self.minimumHeight() != height:
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_height()

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.Base))
        text, mid, hot = palette.color(QPalette.Text), palette.color(QPalette.Mid), QColor(ERROR_COLOR)
        if not self._document:
            painter.setPen(text)
            painter.drawText(self.rect(), Qt.AlignCenter, "Select a datapath.analyze result to see its pipeline.")
            return
        _, texts, cards, arrows = self._layout()
        rates = [b.rate for b in self._boxes if b.rate]
        top_rate = max(rates) if rates else 1.0
        rate_h = QFontMetrics(_fonts(self.font())[2]).height()
        for rect, box in cards:
            fill = QColor(hot) if box.bottleneck else palette.color(QPalette.AlternateBase)
            if box.bottleneck:
                fill.setAlpha(45)
            painter.setBrush(fill)
            painter.setPen(QPen(hot if box.bottleneck else mid, 3 if box.bottleneck else 1))
            painter.drawRoundedRect(rect, 8, 8)
            rate_item = next(t for t in texts if t.text == format_rate(box.rate) and rect.contains(t.rect.center()))
            # A bar on a log scale: rates span four orders of magnitude between disk and collate.
            if box.rate:
                frac = max(0.04, math.log10(1 + box.rate) / math.log10(1 + top_rate))
                bar = QRectF(rate_item.rect.left(), rate_item.rect.top() + rate_h + 5, rate_item.rect.width() * frac, 6)
                painter.fillRect(bar, hot if box.bottleneck else QColor(OK_COLOR))
        for start, end in arrows:
            _arrow(painter, start, end, mid)
        for item in texts:
            painter.setFont(item.font)
            painter.setPen(hot if item.hot else text)
            painter.drawText(item.rect, item.flags, item.text)
        painter.end()


def _arrow(painter: QPainter, start: QPointF, end: QPointF, color: QColor) -> None:
    painter.setPen(QPen(color, 2))
    painter.drawLine(start, end)
    path = QPainterPath()
    path.moveTo(end)
    path.lineTo(end.x() - 8, end.y() - 5)
    path.lineTo(end.x() - 8, end.y() + 5)
    path.closeSubpath()
    painter.fillPath(path, color)
