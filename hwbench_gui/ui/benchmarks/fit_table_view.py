"""The "what fits here" table as a page shows it: in a run's Language model page, and before any run in a window of
its own opened from the Benchmarks tab (a family's ``what_fits``, :class:`~hwbench_gui.engine.reports.family.FitTable`).
"""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports.family import FitTable
from hwbench_gui.ui.theme import ERROR_COLOR

#: The window opens this large (a 1024×700 screen leaves it room), then the user sizes it.
DIALOG_SIZE_PX = (900, 560)


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


class FitsDialog(QDialog):
    """A family's table for this machine, or the one line saying why it could not be read."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(*DIALOG_SIZE_PX)
        layout = QVBoxLayout(self)
        self.heading = QLabel("Reading this machine's memory…")
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.table = new_table()
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def show_table(self, table: FitTable) -> None:
        self.heading.setText(f"<b>{escape(table.title)}</b>")
        fill(self.table, table.headers, table.rows)

    def show_problem(self, text: str) -> None:
        self.heading.setText(f"<span style='color:{ERROR_COLOR}'>{escape(text)}</span>")
        self.table.setVisible(False)
