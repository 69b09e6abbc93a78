"""The results table: the saved result documents and the runs of this session, one row each.

The Status column says how a run ended, whether its document could not be saved (with "Save as…"
to write it elsewhere) and whether the machine was busy; tooltips carry the full texts and warnings.
Selecting one row emits :attr:`ResultsTable.document_selected` for the views that show a document.
The saved documents are read on a worker (hundreds of files took 0.6 s, in the click that first
opened the tab) and come in a few rows per event-loop turn, above this session's runs.
"""

from __future__ import annotations

import os
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

from hwbench_gui.engine.health import normal
from hwbench_gui.engine.health.rules import FAIL, WARN, verdict_of
from hwbench_gui.engine.reports.compare import busy_reasons
from hwbench_gui.engine.results.formatting import figure_text, spread_text
from hwbench_gui.engine.run.queue import QueuedRun
from hwbench_gui.ui.benchmarks.queue_runner import QueueRunner
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR, WARNING_COLOR
from hwbench_gui.ui.turns import next_turn
from hwbench_gui.ui.workers import create_worker

_STATUS_COLORS = {"ok": OK_COLOR, "failed": ERROR_COLOR, "cancelled": WARNING_COLOR}
#: Value right after the benchmark: at 1024x700 the table shows three or four columns before it scrolls.
_RESULT_COLUMNS = ("Started", "Benchmark", "Value", "Precision", "Figure", "Spread (p5–p95)", "Status", "Device")
#: Column index by header, so code and tests name the column they mean.
COLUMN = {name: index for index, name in enumerate(_RESULT_COLUMNS)}
#: The newest saved documents shown when the tab opens.
SHOWN_SAVED = 200
#: Saved documents added as rows per event-loop turn once they are read.
SAVED_ROWS_PER_TURN = 25


def _read_saved(_control, folder) -> tuple[list[dict[str, Any]], list[str]]:
    """Worker body: the newest :data:`SHOWN_SAVED` documents of ``folder``, oldest first, and what could
    not be read (in words)."""
    from hwbench_gui.engine.results.library import list_results

    try:
        documents, errors = list_results(folder)
    except Exception as exc:  # a broken results folder must not cost the tab
        return [], [f"could not read earlier results: {exc}"]
    newest = sorted(documents, key=lambda d: d.get("started_at") or "")[-SHOWN_SAVED:]
    return newest, [f"skipped unreadable result file: {error}" for error in errors]


class ResultsTable(QWidget):
    #: Exactly one row is selected: its document.
    document_selected = Signal(object)
    #: A row was opened (double-click, Enter): its document, whose page the tab brings forward.
    document_opened = Signal(object)
    #: The saved documents are all shown: what could not be read, in words (a list of str).
    saved_loaded = Signal(list)
    #: Documents another process wrote into the results folder were added: what could not be read (list of str).
    arrivals_added = Signal(list)

    def __init__(self, runner: QueueRunner, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._documents: list[dict[str, Any]] = []
        self._saved_rows = 0  # saved documents shown so far: they sit above this session's runs
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
        self.table.itemActivated.connect(self._on_activated)
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
        # created before the folder is first listed (load_saved), so that nothing written in between is missed
        context.results_watch(self).arrived.connect(self._on_arrived)

    def load_saved(self) -> None:
        """Read the results folder's newest documents on a worker, then show them a few rows per turn;
        :attr:`saved_loaded` says what could not be read."""
        worker = create_worker(_read_saved, self.context.results_dir)
        worker.returned.connect(self._on_saved_read)  # a bound method: dropped if this table is deleted first
        self.context.workers.start(worker)

    def _on_saved_read(self, found: tuple[list[dict[str, Any]], list[str]]) -> None:
        self._add_saved(*found)

    def _add_saved(self, documents: list[dict[str, Any]], problems: list[str]) -> None:
        for document in documents[:SAVED_ROWS_PER_TURN]:
            if self.row_of_file(document.get("_path")) is not None:  # arrived while the folder was read
                continue
            self.add_document(document, row=self._saved_rows)
            self._saved_rows += 1
        if len(documents) > SAVED_ROWS_PER_TURN:
            next_turn(self, lambda: self._add_saved(documents[SAVED_ROWS_PER_TURN:], problems))
            return
        self._fit_columns()
        self.saved_loaded.emit(problems)

    def row_of_file(self, path: str | None) -> int | None:
        """The row of the document read from (or saved to) ``path``, or None."""
        if not path:
            return None
        real = os.path.realpath(path)
        return next((row for row, doc in enumerate(self._documents)
                     if doc.get("_path") and os.path.realpath(doc["_path"]) == real), None)

    def _on_arrived(self, documents: list[dict[str, Any]], problems: list[str]) -> None:
        """Documents another process (``hwbench run``) wrote into the results folder: a row each, after the rest;
        a file already shown (this session's own run, or rewritten) keeps its one row, now of the new text."""
        added = 0
        for document in documents:
            row = self.row_of_file(document.get("_path"))
            if row is not None and not self._documents[row].get("_save_error"):
                if self._documents[row].get("id") == document.get("id"):
                    continue  # this window's own run, saved there
                self._remove_row(row)
            self.add_document(document)
            added += 1
        if added:
            self._fit_columns()
            self.context.show_status(f"{added} new result(s) in {self.context.results_dir}", 8000)
        self.arrivals_added.emit(problems)

    def _remove_row(self, row: int) -> None:
        self.table.removeRow(row)
        del self._documents[row]
        if row < self._saved_rows:
            self._saved_rows -= 1

    def add_run(self, run: QueuedRun) -> None:
        """A run of this session ended: its row now, then (a turn each) the columns fitted and the row
        selected, which draws its document; the document learns where it was saved."""
        document = run.document
        if document is None:
            return
        save_error = getattr(run.result, "save_error", None)
        if save_error:
            document["_save_error"] = save_error
        elif run.result.path:
            document["_path"] = str(run.result.path)
            arrived = self.row_of_file(document["_path"])
            if arrived is not None:  # the folder watch read the saved file before this run's end got here
                self._remove_row(arrived)
        self.add_document(document)
        # one turn each: fitting the columns took 13 ms and drawing the document's plot 25 ms, and in
        # the turn of the run's end they stalled the window 50-80 ms with its repaint
        next_turn(self, lambda: (self._fit_columns(), next_turn(self, self._select_newest)))

    def _select_newest(self) -> None:
        self.table.selectRow(self.table.rowCount() - 1)

    def _fit_columns(self) -> None:
        """Columns fit their text, but long figure names and devices elide (full text in the tooltip)."""
        self.table.resizeColumnsToContents()
        for name, widest in (("Figure", 220), ("Device", 200), ("Spread (p5–p95)", 190)):
            column = COLUMN[name]
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), widest))

    def add_document(self, document: dict[str, Any], select: bool = False, row: int | None = None) -> None:
        """A row for ``document`` at ``row`` (default: the end)."""
        row = self.table.rowCount() if row is None else row
        self._documents.insert(row, document)
        self.table.insertRow(row)
        figure = figure_text(document)
        measured = (document.get("figure") or {}).get("value") is not None
        spread = spread_text(document.get("stats")) if measured else ""
        status = document.get("status", "?")
        save_error = document.get("_save_error")
        busy = bool(busy_reasons(document))
        warnings = [str(w) for w in document.get("warnings") or []]
        verdict = verdict_of(document)
        findings = normal.judge(document)
        low = [f for f in findings if f["status"] == normal.LOW]
        unchecked = bool(verdict) and (document.get("params") or {}).get("check") is False
        flags = (f" · health {verdict}" + (" (results not checked)" if unchecked else "") if verdict else "") \
            + (" · not normal for its kind" if low else "")
        cells = {
            "Started": (document.get("started_at") or "")[:19].replace("T", " "),
            "Benchmark": document.get("benchmark", {}).get("id", "?"),
            "Precision": document.get("precision") or "",
            "Figure": (document.get("figure") or {}).get("name") or "",
            "Value": figure,
            "Spread (p5–p95)": spread,
            "Status": status + (" (not saved)" if save_error else "") + (" · busy machine" if busy else "") + flags,
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
            if name == "Status" and (verdict in (WARN, FAIL) or low) and not save_error:
                item.setForeground(QBrush(QColor(ERROR_COLOR if verdict == FAIL else WARNING_COLOR)))
            if name == "Status" and (warnings or findings):
                kind = [f"normal for its kind: {f['text']} [{normal.sources(f)}]" for f in findings]
                item.setToolTip("\n".join(filter(None, [save_error, *warnings, *kind])))
            if name == "Value" and document.get("reason"):
                item.setToolTip(document["reason"])
            if name in ("Figure", "Device", "Spread (p5–p95)"):
                item.setToolTip(str(text))
            self.table.setItem(row, COLUMN[name], item)
        if select:
            self.table.selectRow(row)

    def documents(self) -> list[dict[str, Any]]:
        """Every document shown, saved and of this session."""
        return list(self._documents)

    def selected_document(self) -> dict[str, Any] | None:
        rows = {index.row() for index in self.table.selectedIndexes()}
        return self._documents[rows.pop()] if len(rows) == 1 else None

    def _on_selection_changed(self) -> None:
        document = self.selected_document()
        if document is None:
            return
        self.save_as_button.setEnabled(True)
        self.document_selected.emit(document)

    def _on_activated(self, item: QTableWidgetItem) -> None:
        if 0 <= item.row() < len(self._documents):
            self.document_opened.emit(self._documents[item.row()])

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
