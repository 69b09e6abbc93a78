"""Reports tab: the results library (filter, sort, import, export, delete) and comparisons with
charts, exported as HTML, PDF or CSV.

Everything it shows comes from :mod:`hwbench_gui.engine.reports`; the tab only lays it out.
Charts are matplotlib PNGs shown in labels, the same pictures the HTML report embeds.
Deleting moves files into ``<results>/.trash``; "Undo delete" puts them back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.reports.report import Report, make_report
from hwbench_gui.engine.results import describe, library
from hwbench_gui.ui.context import AppContext

_HEADERS = ("Machine", "GPU", "Benchmark", "Parameters", "Precision", "Figure", "Status", "Date")
_DOC_ROLE = Qt.UserRole + 1
_SORT_ROLE = Qt.UserRole + 2
_MARK_COLOURS = {
    compare.MARK_BETTER: "#2e7d32", compare.MARK_WORSE: "#c62828", compare.MARK_FAILED: "#ef6c00",
    compare.MARK_NOT_COMPARABLE: "#6a1b9a", compare.MARK_NO_BASELINE: "#6a1b9a",
}
_PUBLISHED_COLOUR = "#6b4fbb"
#: Resolution the charts are drawn at for the tab (96 dpi is one logical pixel per point·4/3).
CHART_DPI = 144
#: The widest a library column grows to fit its text; Parameters stretches into what is left.
_COLUMN_MAX_PX = {"Machine": 210, "GPU": 140, "Benchmark": 150, "Figure": 340, "Date": 130}


class _FilterProxy(QSortFilterProxyModel):
    """Keeps rows whose document matches every word of the filter (see ``describe.matches``)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self.setSortRole(_SORT_ROLE)

    def set_text(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt ≥ 6.10 deprecates invalidateFilter()
            self.beginFilterChange()
            self._text = text
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._text = text
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:  # noqa: N802 (Qt's name)
        if not self._text.strip():
            return True
        item = self.sourceModel().item(source_row, 0)
        doc = item.data(_DOC_ROLE) if item is not None else None
        return doc is not None and describe.matches(doc, self._text)


class ReportsTab(QWidget):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.results_dir = Path(context.results_dir)
        self._library = library.Library([], [])
        self._trashed: list[library.Trashed] = []
        self.report: Report | None = None
        self._compare_docs: list[dict[str, Any]] = []
        self._compare_by = "machine"

        self.pages = QTabWidget()
        self.pages.addTab(self._build_library_page(), "Library")
        self.pages.addTab(self._build_compare_page(), "Compare")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.pages)
        self.refresh()

    # -- building ----------------------------------------------------------------------------------

    def _build_library_page(self) -> QWidget:
        page = QWidget()
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

        self.model = QStandardItemModel(0, len(_HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(_HEADERS))
        self.proxy = _FilterProxy(self)
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
        header.setSectionResizeMode(_HEADERS.index("Parameters"), QHeaderView.Stretch)
        header.setStretchLastSection(False)
        self.table.doubleClicked.connect(lambda _index: self.compare_selected("run"))

        buttons = QHBoxLayout()
        self.refresh_button = self._button("Refresh", self.refresh, buttons)
        self._button("Import files…", self._import_files_dialog, buttons)
        self._button("Import folder…", self._import_folder_dialog, buttons)
        self.export_button = self._button("Export selection…", self._export_dialog, buttons)
        self.delete_button = self._button("Delete", self.delete_selected, buttons)
        self.undo_button = self._button("Undo delete", self.undo_delete, buttons)
        self.undo_button.setEnabled(False)
        self.run_like_button = self._button("Run like this here", self.run_like_selected, buttons)
        self.run_like_button.setToolTip("Run the selected result's benchmark on this machine with the parameters "
                                        "that make the two comparable (the rest at this machine's defaults)")
        buttons.addStretch(1)
        self._button("Compare selected runs", lambda: self.compare_selected("run"), buttons)
        self._button("Compare machines", lambda: self.compare_selected("machine"), buttons)

        self.count_label = QLabel()
        self.errors_label = QLabel()
        self.errors_label.setWordWrap(True)
        self.errors_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.errors_label.setStyleSheet("color: #c62828;")

        layout = QVBoxLayout(page)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self.errors_label)
        layout.addLayout(buttons)
        return page

    def _build_compare_page(self) -> QWidget:
        page = QWidget()
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Baseline:"))
        self.baseline_combo = QComboBox()
        # Side names can be long (machine · benchmark · date): the combo must not widen the window past the screen.
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.baseline_combo.setMinimumContentsLength(36)
        self.baseline_combo.currentIndexChanged.connect(self._rebuild_comparison)
        controls.addWidget(self.baseline_combo)
        self.all_figures_check = QCheckBox("All figures")
        self.all_figures_check.setToolTip("Also compare each run's further named figures (not in the composite)")
        self.all_figures_check.toggled.connect(lambda _on: self._rebuild_comparison())
        controls.addWidget(self.all_figures_check)
        controls.addStretch(1)
        self.html_button = self._button("Export HTML…", lambda: self._export_report_dialog("html"), controls)
        self.pdf_button = self._button("Export PDF…", lambda: self._export_report_dialog("pdf"), controls)
        self.csv_button = self._button("Export CSV…", lambda: self._export_report_dialog("csv"), controls)

        self.summary_label = QLabel("Select runs in the Library and press “Compare selected runs” or "
                                    "“Compare machines”.")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.RichText)
        self.compare_table = QTableWidget(0, 0)
        self.compare_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.compare_table.setWordWrap(True)
        self.compare_table.verticalHeader().setVisible(False)

        self.charts_box = QWidget()
        self.charts_layout = QVBoxLayout(self.charts_box)
        self.charts_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.charts_box)

        splitter = QSplitter(Qt.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        # One line per side: comparing many runs must scroll here, not grow the window past the screen.
        summary_scroll = QScrollArea()
        summary_scroll.setWidgetResizable(True)
        summary_scroll.setFrameShape(QScrollArea.NoFrame)
        summary_scroll.setMaximumHeight(150)
        summary_scroll.setWidget(self.summary_label)
        self.summary_label.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.summary_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        top_layout.addWidget(summary_scroll)
        top_layout.addWidget(self.compare_table, 1)
        splitter.addWidget(top)
        splitter.addWidget(scroll)
        splitter.setSizes([300, 400])

        layout = QVBoxLayout(page)
        layout.addLayout(controls)
        layout.addWidget(splitter, 1)
        self._set_export_enabled(False)
        return page

    def _button(self, text: str, slot, layout) -> QPushButton:
        button = QPushButton(text)
        button.clicked.connect(lambda _checked=False: slot())
        layout.addWidget(button)
        return button

    # -- library -----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reload the results folder (and the references when shown)."""
        self._library = library.list_results(self.results_dir,
                                              include_reference=self.reference_check.isChecked())
        self.model.removeRows(0, self.model.rowCount())
        for doc in self._library.docs:
            self.model.appendRow(self._items(doc))
        self.table.resizeColumnsToContents()
        for name, widest in _COLUMN_MAX_PX.items():  # long machine or figure texts are elided (full text in the tooltip)
            column = _HEADERS.index(name)
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), widest))
        self.table.resizeRowsToContents()
        self._update_counts()
        errors = library.errors_text(self._library.errors)
        self.errors_label.setText(("Skipped files:\n" + "\n".join(errors)) if errors else "")
        self.errors_label.setVisible(bool(errors))

    def _items(self, doc: dict[str, Any]) -> list[QStandardItem]:
        row = describe.row(doc)
        published = describe.is_published(doc)
        items = []
        for key in describe.ROW_COLUMNS:
            item = QStandardItem(row[key])
            item.setData(row[key].lower(), _SORT_ROLE)
            item.setToolTip(row[key])
            if published:
                item.setForeground(QBrush(QColor(_PUBLISHED_COLOUR)))
                font = QFont()
                font.setItalic(True)
                item.setFont(font)
                item.setToolTip(f"Published figure, not measured: {(doc.get('reference') or {}).get('source_url')}")
            items.append(item)
        items[0].setData(doc, _DOC_ROLE)
        items[7].setData(str(doc.get("started_at") or (doc.get("reference") or {}).get("published") or ""),
                         _SORT_ROLE)
        status_colour = {"failed": "#c62828", "cancelled": "#ef6c00"}.get(doc.get("status"))
        if status_colour:
            items[6].setForeground(QBrush(QColor(status_colour)))
        return items

    def _update_counts(self) -> None:
        shown = self.proxy.rowCount()
        total = self.model.rowCount()
        published = sum(describe.is_published(d) for d in self._library.docs)
        self.count_label.setText(f"{shown} of {total} result(s) shown ({published} published reference figure(s)); "
                                 f"folder: {self.results_dir}")

    def documents(self, visible_only: bool = True) -> list[dict[str, Any]]:
        """Documents in table order (filtered and sorted) or all loaded ones."""
        if not visible_only:
            return list(self._library.docs)
        return [self.proxy.index(r, 0).data(_DOC_ROLE) for r in range(self.proxy.rowCount())]

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

    def run_like_selected(self) -> None:
        """Queue, in the Benchmarks tab, a run that compares with the one selected result."""
        from hwbench_gui.engine.run.rerun import run_like
        from hwbench_gui.engine.spec.benchmark import ParamError

        docs = self.selected_documents()
        if len(docs) != 1:
            self.context.show_status("Select one result to run like it", 5000)
            return
        if self.context.request_run is None:
            self.context.show_status("No Benchmarks tab to run it in", 5000)
            return
        try:
            bench_id, params = run_like(docs[0])
        except KeyError as exc:
            QMessageBox.warning(self, "Run like this here", f"This install cannot run it: {exc.args[0]}")
            return
        except ParamError as exc:
            QMessageBox.warning(self, "Run like this here", str(exc))
            return
        self.context.request_run(bench_id, dict(params))
        self.context.show_status(f"Queued {bench_id} with the parameters of the selected result", 5000)

    def selected_documents(self) -> list[dict[str, Any]]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(_DOC_ROLE) for r in rows]

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
        files = library.export_documents(self.selected_documents(), folder)
        self.context.show_status(f"Exported {len(files)} result(s) to {folder}", 8000)
        return files

    def delete_selected(self) -> list[library.Trashed]:
        """Move the selected measured results to the trash (published references are not deleted)."""
        docs = [d for d in self.selected_documents() if not describe.is_published(d)]
        files = [Path(d["_path"]) for d in docs if Path(d["_path"]).parent.resolve() == self.results_dir.resolve()]
        if not files:
            return []
        moved = library.delete_to_trash(files, self.results_dir)
        self._trashed = moved
        self.undo_button.setEnabled(True)
        self.refresh()
        self.context.show_status(f"Moved {len(moved)} result(s) to {library.trash_dir(self.results_dir)} "
                                 f"(Undo delete puts them back)", 10000)
        return moved

    def undo_delete(self) -> list[Path]:
        restored = library.restore(self._trashed)
        self._trashed = []
        self.undo_button.setEnabled(False)
        self.refresh()
        self.context.show_status(f"Restored {len(restored)} result(s)", 6000)
        return restored

    # -- dialogs (thin: the work is in the methods above) -----------------------------------------

    def _import_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Import result documents", "", "Result documents (*.json)")
        if files:
            self.import_paths(files)

    def _import_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Import a folder of result documents")
        if folder:
            self.import_paths([folder])

    def _export_dialog(self) -> None:
        if not self.selected_documents():
            QMessageBox.information(self, "Export", "Select the results to export first.")
            return
        folder = QFileDialog.getExistingDirectory(self, "Export the selected results to")
        if folder:
            self.export_selected(folder)

    def _export_report_dialog(self, kind: str) -> None:
        if self.report is None:
            return
        filters = {"html": "HTML (*.html)", "pdf": "PDF (*.pdf)", "csv": "CSV (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"hwbench-report.{kind}",
                                              filters[kind])
        if path:
            try:
                getattr(self, f"export_{kind}")(path)
            except OSError as exc:
                QMessageBox.warning(self, "Export", f"Could not write {path}: {exc}")

    # -- comparing ---------------------------------------------------------------------------------

    def compare_selected(self, by: str = "run") -> None:
        """Compare the selected runs (``by="run"``) or every run of the selected runs' machines
        (``by="machine"``; nothing selected: every machine shown)."""
        selected = self.selected_documents()
        if by == "machine":
            names = {describe.machine_name(d) for d in selected}
            docs = [d for d in self.documents() if not names or describe.machine_name(d) in names]
        else:
            docs = selected or self.documents()
        self.compare_documents(docs, by)

    def compare_documents(self, docs: Sequence[dict[str, Any]], by: str = "machine") -> None:
        self._compare_docs = list(docs)
        self._compare_by = by
        sides = compare.sides_by_machine(docs) if by == "machine" else compare.sides_by_run(docs)
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        for i, side in enumerate(sides):
            self.baseline_combo.addItem(f"[{i + 1}] {side.name}")
        self.baseline_combo.blockSignals(False)
        self._rebuild_comparison()
        self.pages.setCurrentIndex(1)

    def _rebuild_comparison(self) -> None:
        if not self._compare_docs:
            self.report = None
            self._set_export_enabled(False)
            return
        baseline = max(self.baseline_combo.currentIndex(), 0)
        sides = (compare.sides_by_machine(self._compare_docs) if self._compare_by == "machine"
                 else compare.sides_by_run(self._compare_docs))
        self.report = make_report(self._compare_docs, self._library.errors, sides=sides,
                                  baseline=sides[baseline].name, all_figures=self.all_figures_check.isChecked())
        self._show_report(self.report)
        self._set_export_enabled(True)

    def _show_report(self, report: Report) -> None:
        c = report.comparison
        lines = []
        for i, (side, s) in enumerate(zip(c.sides, c.summaries)):
            geo = "—" if s.geomean is None else f"×{s.geomean:.3f}"
            tag = " <i>(published)</i>" if side.published and not side.name.endswith("(published)") else ""
            role = " <b>baseline</b>" if i == c.baseline else ""
            if i != c.baseline and s.n_pair != s.n_geomean:
                geo += (f" (×{s.pair_geomean:.3f} over the {s.n_pair} shared with the baseline)"
                        if s.pair_geomean is not None else " (nothing shared with the baseline)")
            lines.append(f"[{i + 1}] {side.name}{tag}{role}: geometric mean {geo} over {s.n_geomean}; "
                         f"{s.counts_text()}")
        self.summary_label.setText("<br>".join(lines))

        headers = ["Benchmark · figure", "Precision", "Configuration"] + [f"[{i + 1}]" for i in range(len(c.sides))]
        self.compare_table.clear()
        self.compare_table.setColumnCount(len(headers))
        self.compare_table.setHorizontalHeaderLabels(headers)
        self.compare_table.setRowCount(len(c.rows))
        for r, row in enumerate(c.rows):
            for col, text in enumerate((compare.row_label(row), row.precision, row.config_text)):
                self.compare_table.setItem(r, col, QTableWidgetItem(text))
            for i, cell in enumerate(row.cells):
                item = QTableWidgetItem(compare.cell_text(cell))
                tip = [compare.spread_text(cell.metric)] if cell.metric else []
                if cell.test:
                    tip.append(f"test: {cell.test}" + (f", p={cell.p_value:.3g}" if cell.p_value is not None else ""))
                if cell.note:
                    tip.append(cell.note)
                item.setToolTip("\n".join(t for t in tip if t))
                colour = _MARK_COLOURS.get(cell.mark)
                if colour:
                    item.setForeground(QBrush(QColor(colour)))
                self.compare_table.setItem(r, 3 + i, item)
        self.compare_table.resizeColumnsToContents()
        self.compare_table.resizeRowsToContents()

        while self.charts_layout.count() > 1:
            widget = self.charts_layout.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        from hwbench_gui.engine.reports.charts import to_png

        for chart in report.charts:
            label = QLabel()
            pixmap = QPixmap()
            # Drawn at 1.5× and shown at its logical size: sharp text on HiDPI screens, smooth on others.
            pixmap.loadFromData(to_png(chart.figure, dpi=CHART_DPI), "PNG")
            pixmap.setDevicePixelRatio(CHART_DPI / 96)
            label.setPixmap(pixmap)
            label.setToolTip(f"{chart.title}. {chart.caption}")
            label.setObjectName(f"chart:{chart.key}")
            self.charts_layout.insertWidget(self.charts_layout.count() - 1, label)
        if not report.charts:
            self.charts_layout.insertWidget(0, QLabel("No chart: the compared results hold no data to draw."))

    def chart_labels(self) -> list[QLabel]:
        return [w for w in self.charts_box.findChildren(QLabel) if w.objectName().startswith("chart:")]

    def _set_export_enabled(self, enabled: bool) -> None:
        for button in (self.html_button, self.pdf_button, self.csv_button):
            button.setEnabled(enabled)

    def export_html(self, path: str | Path) -> Path:
        from hwbench_gui.engine.reports.html import write_html

        written = write_html(self._require_report(), path)
        self.context.show_status(f"HTML report written to {written}", 8000)
        return written

    def export_pdf(self, path: str | Path) -> Path:
        from hwbench_gui.engine.reports.pdf import write_pdf

        written = write_pdf(self._require_report(), path)
        self.context.show_status(f"PDF report written to {written}", 8000)
        return written

    def export_csv(self, path: str | Path) -> Path:
        from hwbench_gui.engine.reports.csv_export import write_csv

        written = write_csv(self._require_report().docs, path)
        self.context.show_status(f"CSV written to {written}", 8000)
        return written

    def _require_report(self) -> Report:
        if self.report is None:
            raise RuntimeError("nothing compared yet")
        return self.report

    def shutdown(self) -> None:
        """Nothing runs in the background: comparisons and exports are synchronous."""
