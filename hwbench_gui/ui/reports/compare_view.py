"""The Reports tab's Compare page: documents compared side by side (one line per side with its
geometric mean, a table of every figure with its mark), the charts, and the exports.

Everything shown comes from :mod:`hwbench_gui.engine.reports`; the view only lays it out. Charts are
matplotlib PNGs shown in labels, the same pictures the HTML report embeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QBrush, QColor, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports import compare, comparison_text
from hwbench_gui.engine.reports.outputs import refuse_to_overwrite
from hwbench_gui.engine.reports.report import Report, make_report
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.reports import export
from hwbench_gui.ui.reports.model import LoadedResults
from hwbench_gui.ui.reports.run_like import run_like
from hwbench_gui.ui.reports.widgets import button

_MARK_COLOURS = {
    compare.MARK_BETTER: "#2e7d32", compare.MARK_WORSE: "#c62828", compare.MARK_FAILED: "#ef6c00",
    compare.MARK_NOT_COMPARABLE: "#6a1b9a", compare.MARK_NO_BASELINE: "#6a1b9a",
}
#: The widest the compare table's columns grow (text wraps beyond): at 1366 px two sides stay in view.
_LABEL_PX, _PRECISION_PX, _CONFIG_PX, _VALUE_PX = 300, 80, 240, 300
#: Resolution the charts are drawn at for the tab (96 dpi is one logical pixel per point·4/3).
CHART_DPI = 144


class CompareView(QWidget):
    def __init__(self, context: AppContext, loaded: LoadedResults, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.loaded = loaded
        self.report: Report | None = None
        self._docs: list[dict[str, Any]] = []
        self._by = "machine"

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Baseline:"))
        self.baseline_combo = QComboBox()
        # Side names can be long (machine · benchmark · date): the combo must not widen the window past the screen.
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.baseline_combo.setMinimumContentsLength(22)
        self.baseline_combo.currentIndexChanged.connect(self._rebuild)
        controls.addWidget(self.baseline_combo)
        self.all_figures_check = QCheckBox("All figures")
        self.all_figures_check.setToolTip("Also compare each run's further named figures (not in the composite)")
        self.all_figures_check.toggled.connect(lambda _on: self._rebuild())
        controls.addWidget(self.all_figures_check)
        self.by_host_check = QCheckBox("Hosts apart")
        self.by_host_check.setToolTip("One side per host instead of per machine kind (GPUs, CPU, RAM and software "
                                      "alike): two identical boxes, or two cloud loans, told apart")
        self.by_host_check.toggled.connect(lambda _on: self.compare_documents(self._docs, self._by))
        controls.addWidget(self.by_host_check)
        self.run_like_button = button("Run like this here", self.run_like_selected, controls)
        self.run_like_button.setToolTip("Measure on this machine what the selected row's baseline run measured "
                                        "(the form is filled for review): the way to a comparable run")
        controls.addStretch(1)
        self.export_buttons = {kind: button(f"Export {kind.upper()}…", lambda kind=kind: self._export_dialog(kind),
                                            controls) for kind in export.KINDS}

        self.summary_label = QLabel("Select runs in the Library and press “Compare selected runs” or "
                                    "“Compare machines”.")
        self.summary_label.setWordWrap(True)
        # Plain text: side names are host and GPU names from documents, never markup.
        self.summary_label.setTextFormat(Qt.PlainText)
        self.compare_table = QTableWidget(0, 0)
        self.compare_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.compare_table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.compare_table.setWordWrap(True)
        self.compare_table.verticalHeader().setVisible(False)

        self.charts_box = QWidget()
        self.charts_layout = QVBoxLayout(self.charts_box)
        self.charts_note = QLabel()
        self.charts_note.setWordWrap(True)
        self.charts_note.setTextFormat(Qt.PlainText)
        self.charts_note.hide()
        self.charts_layout.addWidget(self.charts_note)
        self.charts_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.charts_box)
        self.charts_scroll = scroll
        scroll.viewport().installEventFilter(self)

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

        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(splitter, 1)
        self._set_export_enabled(False)

    def compare_documents(self, docs: Sequence[dict[str, Any]], by: str = "machine") -> None:
        """Compare ``docs`` side by side, one side per machine (``by="machine"``) or per run."""
        self._docs = list(docs)
        self._by = by
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        for i, side in enumerate(self._sides()):
            self.baseline_combo.addItem(f"[{i + 1}] {side.name}")
        self.baseline_combo.blockSignals(False)
        self._rebuild()

    def _sides(self):
        by = "host" if self._by == "machine" and self.by_host_check.isChecked() else self._by
        return compare.sides_by(self._docs, by)

    def _selected_row(self) -> compare.Row | None:
        rows = self.compare_table.selectionModel().selectedRows() if self.compare_table.selectionModel() else []
        index = rows[0].row() if rows else self.compare_table.currentRow()
        if self.report is None or not 0 <= index < len(self.report.comparison.rows):
            return None
        return self.report.comparison.rows[index]

    def run_like_selected(self) -> bool:
        """Fill the Benchmarks tab's form with what the selected row's baseline run measured (another side's
        run where the baseline has none in that row)."""
        row = self._selected_row()
        if row is None or self.report is None:
            self.context.show_status("Select a row of the comparison to run like it", 5000)
            return False
        baseline = self.report.comparison.baseline
        cells = [row.cells[baseline]] + [c for i, c in enumerate(row.cells) if i != baseline]
        doc = next((c.metric.doc for c in cells if c.metric is not None), None)
        if doc is None:
            return False
        return run_like(self, self.context, doc)

    def _rebuild(self) -> None:
        if not self._docs:
            self.report = None
            self._set_export_enabled(False)
            return
        baseline = max(self.baseline_combo.currentIndex(), 0)
        sides = self._sides()
        self.report = make_report(self._docs, self.loaded.library.errors, sides=sides,
                                  baseline=sides[baseline].name, all_figures=self.all_figures_check.isChecked())
        self._show_summary(self.report)
        self._show_table(self.report)
        self._show_charts(self.report)
        self._set_export_enabled(True)

    def _show_summary(self, report: Report) -> None:
        c = report.comparison
        if export.is_evaluation(report):  # a machine against itself: no composite to show
            self.summary_label.setText(f"[1] {c.sides[0].name}: {len(report.docs)} result(s) of one machine; "
                                       f"{c.summaries[0].counts_text()}. Export HTML/PDF writes its evaluation "
                                       f"report (model × framework × mode × precision).")
            return
        lines = []
        to_match = compare.runs_to_match(c)
        for i, side in enumerate(c.sides):
            lines.append(f"[{i + 1}] {comparison_text.side_summary(c, i)}")
            if side.grouping:
                lines.append(f"      {side.grouping}")
            if i in to_match:
                lines.append(f"      No comparable run for {len(to_match[i])} of the baseline's result(s): select "
                             f"such a row and press “Run like this here” on that machine.")
        self.summary_label.setText("\n".join(lines))

    def _show_table(self, report: Report) -> None:
        c = report.comparison
        headers = ["Benchmark · figure", "Precision", "Configuration"] + [f"[{i + 1}]" for i in range(len(c.sides))]
        self.compare_table.clear()
        self.compare_table.setColumnCount(len(headers))
        self.compare_table.setHorizontalHeaderLabels(headers)
        self.compare_table.setRowCount(len(c.rows))
        for r, row in enumerate(c.rows):
            shared = c.common_text(row.benchmark_id)
            tips = (f"{row.benchmark_id}, every row: {shared}" if shared else row.benchmark_id, row.precision,
                    f"All parameters: {row.all_params_text}" if row.all_params_text else "")
            texts = (comparison_text.row_label(row), row.precision, row.config_text)
            for col, (text, tip) in enumerate(zip(texts, tips)):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                self.compare_table.setItem(r, col, item)
            for i, cell in enumerate(row.cells):
                item = QTableWidgetItem(comparison_text.cell_text(cell))
                tip = [comparison_text.spread_text(cell.metric)] if cell.metric else []
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
        # Label and configuration wrap within a bound: the value columns stay in view on a laptop.
        limits = [_LABEL_PX, _PRECISION_PX, _CONFIG_PX] + [_VALUE_PX] * len(c.sides)
        for column, widest in enumerate(limits):
            self.compare_table.setColumnWidth(column, min(self.compare_table.columnWidth(column), widest))
        self.compare_table.resizeRowsToContents()

    def _show_charts(self, report: Report) -> None:
        while self.charts_layout.count() > 2:  # the note and the stretch stay
            widget = self.charts_layout.takeAt(1).widget()
            if widget is not None:
                widget.deleteLater()
        from hwbench_gui.engine.reports.charts import to_png

        self.charts_note.setText(report.charts_note)
        self.charts_note.setVisible(bool(report.charts_note))
        for chart in report.charts:
            label = QLabel()
            pixmap = QPixmap()
            # Drawn at 1.5× and shown at its logical size: sharp text on HiDPI screens, smooth on others.
            pixmap.loadFromData(to_png(chart.figure, dpi=CHART_DPI), "PNG")
            label.setProperty("chart_png", pixmap)
            self._fit(label)
            label.setToolTip(f"{chart.title}. {chart.caption}")
            label.setObjectName(f"chart:{chart.key}")
            self.charts_layout.insertWidget(self.charts_layout.count() - 1, label)
        if not report.charts:
            self.charts_layout.insertWidget(1, QLabel("No chart: the compared results hold no data to draw."))

    def _chart_width(self) -> int:
        """The width a chart may take: the charts pane's, less its margins and scroll bar."""
        margins = self.charts_layout.contentsMargins()
        bar = self.charts_scroll.verticalScrollBar().sizeHint().width()
        return max(200, self.charts_scroll.viewport().width() - margins.left() - margins.right() - bar)

    def _fit(self, label: QLabel) -> None:
        """Show a chart at its logical size, or narrower to fit the pane (a 1024 px screen must not scroll
        sideways to read a chart): drawn at 1.5×, so a larger device-pixel ratio only shrinks it."""
        pixmap = QPixmap(label.property("chart_png"))
        ratio = max(CHART_DPI / 96, pixmap.width() / self._chart_width())
        pixmap.setDevicePixelRatio(ratio)
        label.setPixmap(pixmap)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        # the charts pane's own resize: the window's comes before its layout has sized the pane
        if watched is self.charts_scroll.viewport() and event.type() == QEvent.Type.Resize:
            for label in self.chart_labels():
                self._fit(label)
        return super().eventFilter(watched, event)

    def chart_labels(self) -> list[QLabel]:
        return [w for w in self.charts_box.findChildren(QLabel) if w.objectName().startswith("chart:")]

    def _set_export_enabled(self, enabled: bool) -> None:
        for widget in self.export_buttons.values():
            widget.setEnabled(enabled)

    def export(self, kind: str, path: str | Path) -> Path:
        """Write the shown comparison as ``kind`` ("html", "pdf" or "csv") to ``path``."""
        if self.report is None:
            raise RuntimeError("nothing compared yet")
        why = refuse_to_overwrite(path, self.report.docs)
        if why:
            raise export.ExportRefused(why)
        written = export.write(self.report, kind, path)
        self.context.show_status(export.written_message(kind, written), 8000)
        return written

    def _export_dialog(self, kind: str) -> None:
        if self.report is None:
            return
        path = export.ask_path(self, kind)
        if path:
            try:
                self.export(kind, path)
            except (OSError, export.ExportRefused) as exc:
                export.warn_not_written(self, path, exc)
