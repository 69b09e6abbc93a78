"""The results table: the saved result documents and the runs of this session, one row each.

The Status column says how a run ended, whether its document could not be saved (with "Save as…"
to write it elsewhere) and whether the machine was busy; tooltips carry the full texts and warnings.
Selecting one row emits :attr:`ResultsTable.document_selected` for the views that show a document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports.compare import busy_reasons
from hwbench_gui.engine.results.formatting import figure_text, spread_text
from hwbench_gui.engine.run.queue import QueuedRun
from hwbench_gui.ui.benchmarks.queue_runner import QueueRunner
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR, WARNING_COLOR

_STATUS_COLORS = {"ok": OK_COLOR, "failed": ERROR_COLOR, "cancelled": WARNING_COLOR}
_RESULT_COLUMNS = ("Started", "Benchmark", "Precision", "Figure", "Value", "Spread (p5–p95)", "Status", "Device")
#: Column index by header, so code and tests name the column they mean.
COLUMN = {name: index for index, name in enumerate(_RESULT_COLUMNS)}
#: The newest saved documents shown when the tab opens.
SHOWN_SAVED = 200


class ResultsTable(QWidget):
    #: Exactly one row is selected: its document.
    document_selected = Signal(object)

    def __init__(self, runner: QueueRunner, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._documents: list[dict[str, Any]] = []
        self.table = QTableWidget(0, len(_RESULT_COLUMNS))
        self.table.setHorizontalHeaderLabels(_RESULT_COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        header.setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._on_selection_changed)
        self.save_as_button = QPushButton("Save as…")
        self.save_as_button.setToolTip("Write the selected result document to a file of your choice")
        self.save_as_button.setEnabled(False)
        self.save_as_button.clicked.connect(self._save_selected_as)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_as_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        runner.run_finished.connect(self.add_run)

    def load_saved(self) -> list[str]:
        """Show the newest saved documents of the results folder; returns what could not be read, in words."""
        try:
            from hwbench_gui.engine.results.library import list_results

            documents, errors = list_results(self.context.results_dir)
        except Exception as exc:  # a broken results folder must not cost the tab
            return [f"could not read earlier results: {exc}"]
        for document in sorted(documents, key=lambda d: d.get("started_at") or "")[-SHOWN_SAVED:]:
            self.add_document(document)
        self._fit_columns()
        return [f"skipped unreadable result file: {error}" for error in errors]

    def add_run(self, run: QueuedRun) -> None:
        """A run of this session ended: its row, selected; the document learns where it was saved."""
        document = run.document
        if document is None:
            return
        save_error = getattr(run.result, "save_error", None)
        if save_error:
            document["_save_error"] = save_error
        elif run.result.path:
            document["_path"] = str(run.result.path)
        self.add_document(document, select=True)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns fit their text, but long figure names and devices elide (full text in the tooltip)."""
        self.table.resizeColumnsToContents()
        for name, widest in (("Figure", 220), ("Device", 200), ("Spread (p5–p95)", 190)):
            column = COLUMN[name]
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), widest))

    def add_document(self, document: dict[str, Any], select: bool = False) -> None:
        self._documents.append(document)
        row = self.table.rowCount()
        self.table.insertRow(row)
        figure = figure_text(document)
        measured = (document.get("figure") or {}).get("value") is not None
        spread = spread_text(document.get("stats")) if measured else ""
        status = document.get("status", "?")
        save_error = document.get("_save_error")
        busy = bool(busy_reasons(document))
        warnings = [str(w) for w in document.get("warnings") or []]
        cells = {
            "Started": (document.get("started_at") or "")[:19].replace("T", " "),
            "Benchmark": document.get("benchmark", {}).get("id", "?"),
            "Precision": document.get("precision") or "",
            "Figure": (document.get("figure") or {}).get("name") or "",
            "Value": figure,
            "Spread (p5–p95)": spread,
            "Status": status + (" (not saved)" if save_error else "") + (" · busy machine" if busy else ""),
            "Device": document.get("device") or "",
        }
        for name, text in cells.items():
            item = QTableWidgetItem(str(text))
            if name == "Status" and (save_error or status in _STATUS_COLORS):
                item.setForeground(QBrush(QColor(ERROR_COLOR if save_error else _STATUS_COLORS[status])))
                if save_error:
                    item.setToolTip(save_error)
            if name == "Status" and busy and not save_error:
                item.setForeground(QBrush(QColor(WARNING_COLOR)))
            if name == "Status" and warnings:
                item.setToolTip("\n".join(filter(None, [save_error, *warnings])))
            if name == "Value" and document.get("reason"):
                item.setToolTip(document["reason"])
            if name in ("Figure", "Device", "Spread (p5–p95)"):
                item.setToolTip(str(text))
            self.table.setItem(row, COLUMN[name], item)
        if select:
            self.table.selectRow(row)

    def selected_document(self) -> dict[str, Any] | None:
        rows = {index.row() for index in self.table.selectedIndexes()}
        return self._documents[rows.pop()] if len(rows) == 1 else None

    def _on_selection_changed(self) -> None:
        document = self.selected_document()
        if document is None:
            return
        self.save_as_button.setEnabled(True)
        self.document_selected.emit(document)

    def _save_selected_as(self) -> None:
        document = self.selected_document()
        if document is None:
            return
        from hwbench_gui.engine.results.store import result_file_name

        default = Path.home() / result_file_name(document)
        path, _ = QFileDialog.getSaveFileName(self, "Save result as", str(default), "JSON (*.json)")
        if path:
            self.save_document_as(document, path)

    def save_document_as(self, document: dict[str, Any], path: str | Path) -> Path | None:
        """Write ``document`` to ``path`` ("Save as…"); a failure is shown, not raised."""
        from hwbench_gui.engine.results.store import write_result_file

        try:
            written = write_result_file(document, path)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Save result", f"Could not write {path}:\n{exc}")
            return None
        document.pop("_save_error", None)
        document["_path"] = str(written)
        row = self._documents.index(document)
        status = self.table.item(row, COLUMN["Status"])
        status.setText(document.get("status", "?"))
        status.setToolTip(f"saved to {written}")
        status.setForeground(QBrush(QColor(_STATUS_COLORS.get(document.get("status"), OK_COLOR))))
        self.context.show_status(f"Result saved to {written}", 6000)
        return written
