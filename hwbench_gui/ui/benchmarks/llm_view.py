"""The "Language model" page of an llm.infer result: generation and prompt tokens/s against context depth,
each with the bound this machine's own measured limit allows (dashed), and the serving sweep's time per
output token against output tokens/s with the latency target (dotted), above a line of verdicts. The
curves come from :mod:`hwbench_gui.engine.reports.llm_section`, as the reports draw them."""

from __future__ import annotations

import html
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from hwbench_gui.engine.reports import llm_section
from hwbench_gui.engine.results import document_check
from hwbench_gui.ui.benchmarks.plot import CurvePlot
from hwbench_gui.ui.theme import ERROR_COLOR, plot_colors

BENCH_ID = llm_section.LLM_ID


def depth_tick(depth: float) -> str:
    """A context depth as a tick label: whole multiples of 1024 as "4k", "16k"; others as they are."""
    if depth >= 1024 and depth % 1024 == 0:
        return f"{depth / 1024:g}k"
    return f"{depth:g}"


def summary_text(document: dict[str, Any]) -> str:
    """One line: each figure's fraction of its bound and the serving verdict."""
    runs = llm_section.build([document])
    if not runs:
        return "This run measured nothing to draw."
    run = runs[0]
    parts = [f"{name}: {value} ({fraction.split(' of ')[0]} of its bound)" for name, value, _, fraction in run.figures]
    text = " · ".join(parts)
    if run.largest:
        text += f". Serving: {run.largest}."
    text += f" Limits measured in the run: {run.limits}."
    text += f" {run.fits}." if run.fits else ""
    text += f" {run.reduced}." if run.reduced else ""
    return text + "".join(f" Inconsistent: {disagreement}." for disagreement in run.disagreements)


class LlmView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary)
        row = QHBoxLayout()
        self.plots = [CurvePlot() for _ in range(3)]
        # Titles are wrapped labels above the plots: a title inside a plot keeps it from shrinking, and the
        # plots beside it would cover its right-hand side.
        self.titles = [QLabel() for _ in self.plots]
        self.columns = []
        for plot, title in zip(self.plots, self.titles):
            plot.plotItem.legend.setVisible(False)  # the titles say what each line is
            title.setWordWrap(True)
            column = QWidget()
            stack = QVBoxLayout(column)
            stack.setContentsMargins(0, 0, 0, 0)
            stack.addWidget(title)
            stack.addWidget(plot, 1)
            self.columns.append(column)
            row.addWidget(column, 1)
        layout.addLayout(row, 1)
        self.document: dict[str, Any] | None = None

    def set_document(self, document: dict[str, Any]) -> None:
        self.document = document
        found = document_check.problem(document)
        if found:  # a document given without the load's check: said, never half drawn
            for column in self.columns:
                column.setVisible(False)
            self.summary.setText(f"This run cannot be shown: {html.escape(found)}")
            return
        charts = llm_section.depth_curves(document)
        serving = llm_section.serving_curve(document)
        if serving is not None:
            charts.append(serving)
        for plot, title, column, spec in zip(self.plots, self.titles, self.columns, charts + [None] * len(self.plots)):
            column.setVisible(spec is not None)
            if spec is not None:
                self._draw(plot, spec)
                title.setText(spec.short_title or spec.title)
        self.summary.setText(summary_text(document))

    def _draw(self, plot: CurvePlot, spec: llm_section.CurveChart) -> None:
        measured = [c for c in spec.curves if not c.bound]
        plot.draw_curves([(c.label, c.x, c.y) for c in measured], x_label=spec.x_label, y_label=spec.y_label,
                         x_log=spec.x_log)
        bound_pen = pg.mkPen("#6b7280", width=2, style=Qt.PenStyle.DashLine)
        bounds = [c for c in spec.curves if c.bound]
        for curve in bounds:
            if len(curve.x) == 1:  # one depth measured: its bound is a level to read the point against
                plot.addItem(pg.InfiniteLine(curve.y[0], angle=0, pen=bound_pen))
                plot.plot([], [], pen=bound_pen, name=curve.label)
            else:
                plot.plot(curve.x, curve.y, pen=bound_pen, name=curve.label)
        if bounds:
            # from zero to above the bound, so the height of a point is its share of what the machine allows
            top = max(max(c.y) for c in spec.curves if c.y)
            plot.setYRange(0, 1.1 * top, padding=0)
            if len(measured[0].x) == 1:
                plot.setXRange(measured[0].x[0] - 1, measured[0].x[0] + 1)
            # ticks at the depths measured, 4096 as "4k": automatic ticks of 5000s run together on a narrow chart
            plot.getAxis("bottom").setTicks([[(x, depth_tick(x)) for x in measured[0].x], []])
        if spec.target_y is not None:
            plot.addItem(pg.InfiniteLine(spec.target_y, angle=0, pen=pg.mkPen(ERROR_COLOR, width=1,
                                                                             style=Qt.PenStyle.DotLine)))
            plot.plot([], [], pen=pg.mkPen(ERROR_COLOR, style=Qt.PenStyle.DotLine), name=spec.target_label)
        foreground = plot_colors(self.palette())[1]
        last = len(spec.point_labels) - 1
        for index, (x, y, text) in enumerate(zip(measured[0].x, measured[0].y, spec.point_labels)):
            # the last point's label sits to its left, inside the plot
            label = pg.TextItem(text, color=foreground, anchor=(1 if index == last and last else 0, 1))
            label.setPos(x, y)
            plot.addItem(label)
        plot._drawn = None  # the overlays are not part of what draw_curves remembers
