"""The snake board: one snapshot painted with QPainter, and the keys that steer in play mode."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QWidget

from hwbench_gui.demos.snake.game import DOWN, LEFT, RIGHT, UP

#: Arrow keys and WASD, as the game's directions.
KEYS = {Qt.Key_Up: UP, Qt.Key_Right: RIGHT, Qt.Key_Down: DOWN, Qt.Key_Left: LEFT,
        Qt.Key_W: UP, Qt.Key_D: RIGHT, Qt.Key_S: DOWN, Qt.Key_A: LEFT}


class BoardView(QWidget):
    """Draws one board snapshot (see ``train.board_snapshot``) with QPainter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snapshot: dict | None = None
        self.caption = ""
        self.setMinimumSize(240, 240)
        self.setFocusPolicy(Qt.StrongFocus)

    def show_snapshot(self, snapshot: dict | None, caption: str = "") -> None:
        self.snapshot, self.caption = snapshot, caption
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#111827"))
        snap = self.snapshot
        if snap is None:
            p.setPen(QColor("#9ca3af"))
            p.drawText(self.rect(), Qt.AlignCenter, self.caption or "Train, Watch agent or Play yourself")
            return
        h, w = snap["height"], snap["width"]
        header = 24  # the caption line sits above the board, never over the snake
        cell = min(self.width() / w, (self.height() - header) / h)
        x0, y0 = (self.width() - cell * w) / 2, header + (self.height() - header - cell * h) / 2
        p.fillRect(QRectF(x0, y0, cell * w, cell * h), QColor("#1f2937"))
        body = snap["body"]
        length = max(int(body.max()), 1)
        pad = max(cell * 0.06, 0.5)
        p.setPen(Qt.NoPen)
        for r, c in zip(*np.nonzero(body)):
            # Older segments fade: the tail, which frees first, is the darkest.
            t = body[r, c] / length
            p.setBrush(QColor.fromHsvF(0.36, 0.75, 0.35 + 0.55 * t))
            p.drawRoundedRect(QRectF(x0 + c * cell + pad, y0 + r * cell + pad, cell - 2 * pad, cell - 2 * pad),
                              cell * 0.2, cell * 0.2)
        hr, hc = snap["head"]
        if body[hr, hc]:
            p.setBrush(QColor("#bef264"))
            p.drawRoundedRect(QRectF(x0 + hc * cell + pad, y0 + hr * cell + pad, cell - 2 * pad, cell - 2 * pad),
                              cell * 0.3, cell * 0.3)
        fr, fc = snap["food"]
        if fr >= 0:
            p.setBrush(QColor("#ef4444"))
            p.drawEllipse(QRectF(x0 + fc * cell + cell * 0.2, y0 + fr * cell + cell * 0.2, cell * 0.6, cell * 0.6))
        p.setPen(QColor("#f9fafb"))
        font = QFont(self.font())
        font.setPointSizeF(max(9.0, font.pointSizeF()))
        p.setFont(font)
        text = f"score {snap['score']}   moves {snap['steps']}"
        if self.caption:
            text = f"{self.caption}   {text}"
        p.drawText(QRectF(x0, y0 - header, cell * w, header), Qt.AlignLeft | Qt.AlignVCenter, text)
        if snap.get("finished"):
            p.drawText(QRectF(x0, y0, cell * w, cell * h), Qt.AlignCenter, f"game over — score {snap['score']}")
