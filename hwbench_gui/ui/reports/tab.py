"""Reports tab: the results library (:mod:`.library_view`: filter, sort, import, export, delete with
undo) and comparisons with charts (:mod:`.compare_view`), exported as HTML, PDF or CSV (:mod:`.export`).

Both pages share one :class:`~hwbench_gui.ui.reports.model.LoadedResults`, owned here; the tab turns
the library's "compare" into what the compare view shows. A run of the window's queue that saves a
document into the results folder reloads the library (in the background) as it ends: a new run is listed
without Refresh.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import shiboken6
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from hwbench_gui.engine.reports.report import Report
from hwbench_gui.engine.results import library, machine_kind
from hwbench_gui.engine.run.queue import QueueChange
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.inbox import gui_inbox
from hwbench_gui.ui.reports.compare_view import CompareView
from hwbench_gui.ui.reports.library_view import LibraryView
from hwbench_gui.ui.reports.model import LoadedResults


class ReportsTab(QWidget):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.results_dir = Path(context.results_dir)
        self.loaded = LoadedResults(self.results_dir)
        self.library_view = LibraryView(context, self.loaded)
        self.compare_view = CompareView(context, self.loaded)
        self.library_view.compare_requested.connect(self.compare_selected)

        self.pages = QTabWidget()
        self.pages.addTab(self.library_view, "Library")
        self.pages.addTab(self.compare_view, "Compare")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.pages)

        # The views' widgets under the names tests and scripts reach for.
        self.filter_edit = self.library_view.filter_edit
        self.reference_check = self.library_view.reference_check
        self.model = self.library_view.model
        self.table = self.library_view.table
        self.errors_label = self.library_view.errors_label
        self.undo_button = self.library_view.undo_button
        self.baseline_combo = self.compare_view.baseline_combo
        self.compare_table = self.compare_view.compare_table
        arrivals = self.context.results_watch(self)  # before the first listing: nothing written in between is missed
        self.library_view.refresh_in_background()
        self._listen_for_saved_runs()
        # documents another process (hwbench run) wrote into the folder: listed again, as after a run here
        arrivals.arrived.connect(lambda *_: self._on_run_saved())

    def _listen_for_saved_runs(self) -> None:
        """Reload the library when a queued run has saved its document (the queue tells its listeners on
        the worker thread that ran it: the reload is posted to the GUI thread's inbox)."""
        queue, inbox = self.context.run_queue, gui_inbox()

        def listener(change: QueueChange) -> None:
            result = change.run.result
            if change.kind != "finished" or result is None or getattr(result, "path", None) is None:
                return
            if inbox.on_owner_thread():
                self._on_run_saved()
            else:
                inbox.post(self._on_run_saved)

        queue.add_listener(listener)
        # The queue belongs to the context and may outlive this tab: never call into a deleted one.
        self.destroyed.connect(lambda *_: queue.remove_listener(listener))

    def _on_run_saved(self) -> None:
        if shiboken6.isValid(self):
            self.library_view.refresh_in_background()

    @property
    def report(self) -> Report | None:
        """The comparison shown on the Compare page (None before the first)."""
        return self.compare_view.report

    # -- library -----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reload the results folder (and the references when shown), now."""
        self.library_view.refresh()

    def wait_loaded(self, timeout_s: float = 30.0) -> bool:
        """Wait (processing events) until the library's first listing, made in the background, is shown."""
        return self.library_view.wait_loaded(timeout_s)

    def documents(self, visible_only: bool = True) -> list[dict[str, Any]]:
        """Documents in table order (filtered and sorted) or all loaded ones."""
        return self.library_view.documents(visible_only)

    def set_filter(self, text: str) -> None:
        self.library_view.set_filter(text)

    def select_rows(self, rows: Sequence[int]) -> None:
        """Select the given rows of the (filtered, sorted) table."""
        self.library_view.select_rows(rows)

    def selected_documents(self) -> list[dict[str, Any]]:
        return self.library_view.selected_documents()

    def run_like_selected(self) -> None:
        """Queue, in the Benchmarks tab, a run that compares with the one selected result."""
        self.library_view.run_like(self.selected_documents())

    def import_paths(self, paths: Sequence[str | Path]) -> library.ImportReport:
        """Import files or folders into the results folder and say what happened."""
        return self.library_view.import_paths(paths)

    def export_selected(self, folder: str | Path) -> list[Path]:
        return self.library_view.export_selected(folder)

    def delete_selected(self) -> list[library.Trashed]:
        """Move the selected measured results to the trash (published references are not deleted)."""
        return self.library_view.delete_selected()

    def undo_delete(self) -> list[Path]:
        return self.library_view.undo_delete()

    # -- comparing ---------------------------------------------------------------------------------

    def compare_selected(self, by: str = "run") -> None:
        """Compare the selected runs (``by="run"``) or every run of the selected runs' machines
        (``by="machine"``; nothing selected: every machine shown)."""
        selected = self.selected_documents()
        if by == "machine":
            machines = {machine_kind.kind_key(d) for d in selected}
            docs = [d for d in self.documents() if not machines or machine_kind.kind_key(d) in machines]
        else:
            docs = selected or self.documents()
        self.compare_documents(docs, by)

    def compare_documents(self, docs: Sequence[dict[str, Any]], by: str = "machine") -> None:
        self.compare_view.compare_documents(docs, by)
        self.pages.setCurrentWidget(self.compare_view)

    def chart_labels(self) -> list[QLabel]:
        return self.compare_view.chart_labels()

    def export_html(self, path: str | Path) -> Path:
        return self.compare_view.export("html", path)

    def export_pdf(self, path: str | Path) -> Path:
        return self.compare_view.export("pdf", path)

    def export_csv(self, path: str | Path) -> Path:
        return self.compare_view.export("csv", path)

    def shutdown(self) -> None:
        """Drop the library's background reload if one still runs (comparisons and exports are
        synchronous)."""
        self.context.stop_watching_results()
        self.library_view.shutdown()
