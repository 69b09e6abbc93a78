"""An image scaled to fit, on which the user drags a region or clicks points (the Motion page's two views)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget


class ImageView(QWidget):
    """Shows a QImage scaled to fit; in "roi" mode a drag draws a rectangle, in "click" mode clicks add points.

    Coordinates in its signals are image pixels.
    """

    roi_drawn = Signal(tuple)  # (x, y, w, h)
    clicked = Signal(float, float)

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.image: QImage | None = None
        self.placeholder = placeholder
        self.mode = "view"  # view | roi | click
        self.points: list[tuple[float, float]] = []  # drawn in "click" mode
        self._drag: tuple[QPointF, QPointF] | None = None
        self.setMinimumSize(320, 240)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_image(self, image: QImage | None) -> None:
        self.image = image
        self.update()

    def _frame(self) -> QRectF:
        if self.image is None:
            return QRectF(self.rect())
        f = min(self.width() / self.image.width(), self.height() / self.image.height())
        w, h = self.image.width() * f, self.image.height() * f
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def to_image(self, pos: QPointF) -> tuple[float, float]:
        r = self._frame()
        if self.image is None or r.width() <= 0:
            return 0.0, 0.0
        return ((pos.x() - r.x()) * self.image.width() / r.width(),
                (pos.y() - r.y()) * self.image.height() / r.height())

    def _to_widget(self, x: float, y: float) -> QPointF:
        r = self._frame()
        return QPointF(r.x() + x * r.width() / self.image.width(), r.y() + y * r.height() / self.image.height())

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#111827"))
        if self.image is None:
            p.setPen(QColor("#9ca3af"))
            p.drawText(self.rect(), Qt.AlignCenter | Qt.TextWordWrap, self.placeholder)
            return
        p.setRenderHint(QPainter.SmoothPixmapTransform)
        p.drawImage(self._frame(), self.image)
        if self.mode == "click":
            p.setPen(QPen(QColor("#f43f5e"), 2))
            p.setBrush(QColor("#fda4af"))
            for i, (x, y) in enumerate(self.points):
                c = self._to_widget(x, y)
                p.drawEllipse(c, 4, 4)
                p.drawText(c + QPointF(6, -6), str(i + 1))
        if self._drag is not None:
            p.setPen(QPen(QColor("#facc15"), 2, Qt.DashLine))
            p.setBrush(Qt.NoBrush)
            p.drawRect(QRectF(self._drag[0], self._drag[1]).normalized())

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if self.image is None:
            return
        if self.mode == "roi":
            self._drag = (event.position(), event.position())
        elif self.mode == "click":
            x, y = self.to_image(event.position())
            if 0 <= x < self.image.width() and 0 <= y < self.image.height():
                self.points.append((x, y))
                self.clicked.emit(x, y)
                self.update()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._drag is not None:
            self._drag = (self._drag[0], event.position())
            self.update()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if self._drag is None:
            return
        (x0, y0), (x1, y1) = self.to_image(self._drag[0]), self.to_image(event.position())
        self._drag = None
        self.update()
        x, y, w, h = int(min(x0, x1)), int(min(y0, y1)), int(abs(x1 - x0)), int(abs(y1 - y0))
        if w >= 16 and h >= 16:
            self.roi_drawn.emit((x, y, w, h))

