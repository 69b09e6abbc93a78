"""A "what fits here" table as the family pages show it: a run's own table, or this machine's before any run."""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem


def new_table() -> QTableWidget:
    """A read-only table sized to its text, without row numbers."""
    table = QTableWidget(0, 0)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def fill(table: QTableWidget, headers: list[str], rows: list[list[str]]) -> None:
    """Put ``rows`` of text under ``headers`` into ``table``, replacing what it showed."""
    table.clear()
    table.setColumnCount(len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            table.setItem(i, j, QTableWidgetItem(text))
