"""The Reports tab's Library page: every result document in a sortable, filtered table, with import,
export, delete (into ``<results>/.trash``, with "Undo delete") and "Run like this here".

The documents come from the shared :class:`~hwbench_gui.ui.reports.model.LoadedResults`; comparing is
the compare view's job, asked for through :attr:`LibraryView.compare_requested`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.results import describe, library
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.reports.run_like import run_like
from hwbench_gui.ui.reports.library_model import DOC_ROLE, HEADERS, FilterProxy, row_items
from hwbench_gui.ui.reports.model import LoadedResults
from hwbench_gui.ui.reports.widgets import button
from hwbench_gui.ui.workers import Worker
from hwbench_gui.ui.start_folder import start_path

#: The widest a library column grows to fit its text; Parameters stretches into what is left.
_COLUMN_MAX_PX = {"Machine": 210, "GPU": 140, "Benchmark": 150, "Figure": 340, "Date": 130}


class LibraryView(QWidget):
    #: ``by`` is "run" (the selected runs) or "machine" (every run of the selected runs' machines).
    compare_requested = Signal(str)

    def __init__(self, context: AppContext, loaded: LoadedResults, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.loaded = loaded
        self._trashed: list[library.Trashed] = []
        self._generation = 0  # each reload's number: a background listing older than the last is dropped
        self._loader: Worker | None = None
        self.filter_edit = QLineEdit(placeholderText="Filter: words that must all appear (machine, benchmark, "
                                                     "precision, status…)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.set_filter)
        self.reference_check = QCheckBox("Show published reference figures")
        self.reference_check.setChecked(True)
        self.reference_check.toggled.connect(lambda _on: self.refresh())
        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.reference_check)

        self.model = QStandardItemModel(0, len(HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        self.proxy = FilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(7, Qt.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setTextElideMode(Qt.ElideRight)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        # Parameters take what is left, so Figure, Status and Date always stay in view.
        header.setSectionResizeMode(HEADERS.index("Parameters"), QHeaderView.Stretch)
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(300)  # widths from the first rows: thousands are not all measured
        self.table.doubleClicked.connect(lambda _index: self.compare_requested.emit("run"))

        buttons = QHBoxLayout()
        self.refresh_button = button("Refresh", self.refresh, buttons)
        button("Import files…", self._import_files_dialog, buttons)
        button("Import folder…", self._import_folder_dialog, buttons)
        self.export_button = button("Export selection…", self._export_dialog, buttons)
        self.delete_button = button("Delete", self.delete_selected, buttons)
        self.undo_button = button("Undo delete", self.undo_delete, buttons)
        self.undo_button.setEnabled(False)
        buttons.addStretch(1)
        # What acts on the selection gets a row of its own: nine buttons in one row made the tab (and so the
        # window) wider than a 1024 px screen.
        selection = QHBoxLayout()
        self.run_like_button = button("Run like this here", lambda: self.run_like(self.selected_documents()),
                                      selection)
        self.run_like_button.setToolTip("Run the selected result's benchmark on this machine with the parameters "
                                        "that make the two comparable (the rest at this machine's defaults)")
        selection.addStretch(1)
        button("Compare selected runs", lambda: self.compare_requested.emit("run"), selection)
        button("Compare machines", lambda: self.compare_requested.emit("machine"), selection)

        self.count_label = QLabel()
        self.errors_label = QLabel()
        for label in (self.count_label, self.errors_label):  # file names and reasons from documents: no markup
            label.setTextFormat(Qt.PlainText)
        self.errors_label.setWordWrap(True)
        self.errors_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.errors_label.setStyleSheet("color: #c62828;")

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self.errors_label)
        layout.addLayout(buttons)
        layout.addLayout(selection)

    @property
    def results_dir(self) -> Path:
        return self.loaded.results_dir

    def refresh(self) -> None:
        """Reload the results folder (and the references when shown), now."""
        self._generation += 1
        self._show(self.loaded.load(include_reference=self.reference_check.isChecked()))

    def refresh_in_background(self) -> None:
        """Reload on a worker thread (reading a large folder must not block the window); the table
        shows the result when it arrives, unless a newer reload came first."""
        self._generation += 1
        generation = self._generation
        include_reference = self.reference_check.isChecked()
        self.count_label.setText(f"Loading the results in {self.results_dir}…")
        worker = Worker(lambda _control: library.list_results(self.results_dir, include_reference=include_reference),
                        name="reports-library")
        worker.returned.connect(lambda found: self._arrived(generation, found))
        worker.errored.connect(lambda exc: self._failed(generation, exc))
        self._loader = worker
        self.context.workers.start(worker)

    def shutdown(self) -> None:
        """Drop a background reload still running: it ends on its own and shows nothing."""
        if self._loader is not None:
            self._loader.abort()
            self._loader.mute()
            self._loader = None

    def wait_loaded(self, timeout_s: float = 30.0) -> bool:
        """Process events until a background reload has been shown (for scripts and tests)."""
        from PySide6.QtCore import QCoreApplication

        deadline = time.monotonic() + timeout_s
        while self._loader is not None and time.monotonic() < deadline:
            QCoreApplication.processEvents()
            time.sleep(0.005)
        return self._loader is None

    def _arrived(self, generation: int, found: library.Library) -> None:
        if generation == self._generation:
            self.loaded.library = found
            self._show(found)
        self._loader = None

    def _failed(self, generation: int, exc: BaseException) -> None:
        self._loader = None
        if generation == self._generation:
            self.errors_label.setText(f"The results folder could not be listed: {exc}")
            self.errors_label.setVisible(True)

    def _show(self, loaded: library.Library) -> None:
        self.model.removeRows(0, self.model.rowCount())
        self.proxy.setDynamicSortFilter(False)  # one sort after the fill, not one per row
        labels = describe.machine_labels(loaded.docs)  # two hosts named alike are listed apart
        for doc in loaded.docs:
            self.model.appendRow(row_items(doc, labels[describe.machine_key(doc)]))
        self.proxy.setDynamicSortFilter(True)
        self.table.resizeColumnsToContents()
        # Long machine or figure texts are elided (the full text is in the tooltip).
        for name, widest in _COLUMN_MAX_PX.items():
            column = HEADERS.index(name)
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), widest))
        self._update_counts()
        errors = library.errors_text(loaded.errors)
        self.errors_label.setText(("Skipped files:\n" + "\n".join(errors)) if errors else "")
        self.errors_label.setVisible(bool(errors))

    def _update_counts(self) -> None:
        shown = self.proxy.rowCount()
        total = self.model.rowCount()
        published = sum(describe.is_published(d) for d in self.loaded.library.docs)
        self.count_label.setText(f"{shown} of {total} result(s) shown ({published} published reference figure(s)); "
                                 f"folder: {self.results_dir}")

    def documents(self, visible_only: bool = True) -> list[dict[str, Any]]:
        """Documents in table order (filtered and sorted) or all loaded ones."""
        if not visible_only:
            return list(self.loaded.library.docs)
        return [self.proxy.index(r, 0).data(DOC_ROLE) for r in range(self.proxy.rowCount())]

    def set_filter(self, text: str) -> None:
        if self.filter_edit.text() != text:
            self.filter_edit.setText(text)  # comes back here through textChanged
            return
        self.proxy.set_text(text)
        self._update_counts()

    def select_rows(self, rows: Sequence[int]) -> None:
        """Select the given rows of the (filtered, sorted) table."""
        selection = self.table.selectionModel()
        selection.clearSelection()
        for r in rows:
            selection.select(self.proxy.index(r, 0),
                             QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)

    def selected_documents(self) -> list[dict[str, Any]]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(DOC_ROLE) for r in rows]

    def run_like(self, docs: Sequence[dict[str, Any]]) -> None:
        """Queue, in the Benchmarks tab, a run that compares with the one result in ``docs``."""
        if len(docs) != 1:
            self.context.show_status("Select one result to run like it", 5000)
            return
        run_like(self, self.context, docs[0])

    def import_paths(self, paths: Sequence[str | Path]) -> library.ImportReport:
        """Import files or folders into the results folder and say what happened."""
        report = library.import_documents(paths, self.results_dir)
        self.refresh()
        message = f"Imported {len(report.imported)} result(s)"
        if report.duplicates:
            message += f", {len(report.duplicates)} already present"
        if report.skipped:
            message += f", skipped {len(report.skipped)}"
        if report.write_error:  # read-only or full results folder: say so, no traceback
            message += f"; stopped: {report.write_error}"
        self.context.show_status(message, 8000)
        problems = ([f"Import stopped: {report.write_error}"] if report.write_error else []) + \
            (["Not imported:", *library.errors_text(report.skipped)] if report.skipped else [])
        if problems:
            self.errors_label.setText("\n".join(problems))
            self.errors_label.setVisible(True)
        return report

    def export_selected(self, folder: str | Path) -> list[Path]:
        """Write the selected documents into ``folder``; a folder that cannot be written is said
        in the status bar and below the table, and nothing is raised."""
        try:
            exported = library.export_documents(self.selected_documents(), folder)
        except OSError as exc:
            message = f"Export stopped: cannot write into {folder}: {exc.strerror or exc}"
            self.context.show_status(message, 10000)
            self.errors_label.setText(message)
            self.errors_label.setVisible(True)
            return []
        present = (f"; {len(exported.already_present)} already there, not written twice"
                   if exported.already_present else "")
        self.context.show_status(f"Exported {len(exported.written)} result(s) to {folder}{present}", 8000)
        if exported.written:
            self.refresh()  # an export into the results folder adds rows
        return exported.written

    def _show_failures(self, what: str, failed: list) -> None:
        """Files a delete or an undo could not move: below the table, one line each, and in the status bar."""
        if not failed:
            return
        listed = self.errors_label.text() if self.errors_label.isVisibleTo(self) else ""  # the skipped files stay
        self.errors_label.setText("\n".join([f"{what}:", *library.errors_text(failed), *([listed] if listed else [])]))
        self.errors_label.setVisible(True)
        self.context.show_status(f"{what}: {len(failed)} file(s), see below the table", 10000)

    def delete_selected(self) -> list[library.Trashed]:
        """Move the selected measured results to the trash (published references are not deleted)."""
        docs = [d for d in self.selected_documents() if not describe.is_published(d)]
        files = [Path(d["_path"]) for d in docs if Path(d["_path"]).parent.resolve() == self.results_dir.resolve()]
        if not files:
            return []
        moved, failed = library.delete_to_trash(files, self.results_dir)
        self._trashed = moved
        self.undo_button.setEnabled(bool(moved))
        self.refresh()
        if moved:
            self.context.show_status(f"Moved {len(moved)} result(s) to {library.trash_dir(self.results_dir)} "
                                     f"(Undo delete puts them back)", 10000)
        self._show_failures("Not deleted", failed)
        return moved

    def undo_delete(self) -> list[Path]:
        restored, failed = library.restore(self._trashed)
        self._trashed = []
        self.undo_button.setEnabled(False)
        self.refresh()
        self.context.show_status(f"Restored {len(restored)} result(s)", 6000)
        self._show_failures("Not restored", failed)
        return restored

    # -- dialogs (thin: the work is in the methods above) -----------------------------------------

    def _import_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Import result documents",
                                                start_path(), "Result documents (*.json)")
        if files:
            self.import_paths(files)

    def _import_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Import a folder of result documents", start_path())
        if folder:
            self.import_paths([folder])

    def _export_dialog(self) -> None:
        if not self.selected_documents():
            QMessageBox.information(self, "Export", "Select the results to export first.")
            return
        folder = QFileDialog.getExistingDirectory(self, "Export the selected results to", start_path())
        if folder:
            self.export_selected(folder)
