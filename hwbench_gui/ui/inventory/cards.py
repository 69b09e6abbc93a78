"""The building blocks of the Inventory page: section titles, warning and note labels, cards of
label/value rows, and the small GPU-by-GPU tables (topology, P2P)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from hwbench_gui.engine.inventory import text as inv_text
from hwbench_gui.ui.theme import WARNING_COLOR


def section_title(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.25)
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(0, 8, 0, 2)
    return label


def warning_label(text: str, prominent: bool = False) -> QLabel:
    label = QLabel(f"⚠ {text}")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    weight = "font-weight: 600;" if prominent else ""
    label.setStyleSheet(f"color: {WARNING_COLOR}; {weight}")
    label.setProperty("warning", True)
    return label


def note_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    font = label.font()
    font.setItalic(True)
    label.setFont(font)
    mute(label)
    return label


def mute(label: QLabel) -> None:
    # A palette role, not a fixed grey, so muted text reads in light and dark themes alike.
    label.setForegroundRole(QPalette.PlaceholderText)


class Card(QGroupBox):
    """A titled box of label/value rows in ``columns`` column pairs, then its warnings and notes."""

    def __init__(self, title: str, rows: list[inv_text.Row], columns: int = 2, parent=None) -> None:
        super().__init__(title, parent)
        title_font = QFont(self.font())
        title_font.setBold(True)
        self.setFont(title_font)
        body_font = QFont(title_font)
        body_font.setBold(False)
        layout = QVBoxLayout(self)
        # One QFormLayout per column: unlike a QGridLayout it sizes wrapped labels by their real width.
        columns_box = QHBoxLayout()
        columns_box.setSpacing(24)
        per_column = max(1, -(-len(rows) // columns))
        for start in range(0, max(len(rows), 1), per_column):
            form = QFormLayout()
            form.setLabelAlignment(Qt.AlignRight | Qt.AlignTop)
            form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
            form.setRowWrapPolicy(QFormLayout.DontWrapRows)
            form.setVerticalSpacing(3)
            for row in rows[start:start + per_column]:
                name = QLabel(f"{row.label}:")
                name.setFont(body_font)
                value = QLabel(row.text)
                value.setFont(body_font)
                value.setWordWrap(True)
                value.setTextInteractionFlags(Qt.TextSelectableByMouse)
                if row.missing:
                    mute(value)
                form.addRow(name, value)
            columns_box.addLayout(form, 1)
        layout.addLayout(columns_box)
        self.body = layout
        self.body_font = body_font

    def add_label(self, label: QLabel) -> None:
        """Add a warning or note below the rows, in the body font."""
        font = QFont(self.body_font)
        font.setItalic(label.font().italic())
        label.setFont(font)
        self.body.addWidget(label)


class MatrixTable(QTableWidget):
    """A small read-only GPU-by-GPU table (topology, P2P)."""

    def __init__(self, matrix: list[list[Any]], parent=None) -> None:
        size = len(matrix)
        super().__init__(size, size, parent)
        labels = [f"GPU{i}" for i in range(size)]
        self.setHorizontalHeaderLabels(labels)
        self.setVerticalHeaderLabels(labels)
        for i, row in enumerate(matrix):
            for j, cell in enumerate(row):
                item = QTableWidgetItem("—" if cell == "self" else str(cell if cell is not None else "?"))
                item.setTextAlignment(Qt.AlignCenter)
                item.setToolTip(str(cell))
                self.setItem(i, j, item)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizeAdjustPolicy(QAbstractScrollArea.AdjustToContents)
        self.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Maximum)
