"""The "Language model" page of an llm.infer result: what ran (model, precision, batch, step kind, device), then
generation and prompt tokens/s against context depth, each with the bound this machine's own measured limit
allows (dashed), and the serving sweep's time per output token and time to first token against output
tokens/s, each with its latency target (dotted), below a line of verdicts. A run of one depth is a bar with its
bound across it. The curves come from :mod:`hwbench_gui.engine.reports.llm_section`, as the reports draw them.
Each chart's legend is a line of text above it: inside a plot a third of a 1024-pixel window wide it would cover
the points."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports import llm_section
from hwbench_gui.engine.results import describe, document_check
from hwbench_gui.ui.benchmarks import fit_table_view
from hwbench_gui.ui.benchmarks.family_page import FamilyPage
from hwbench_gui.ui.benchmarks.plot import CurvePlot
from hwbench_gui.ui.scrolled_page import scroll_page
from hwbench_gui.ui.text_label import text_label
from hwbench_gui.ui.theme import ERROR_COLOR, plot_colors

BENCH_ID = llm_section.LLM_ID
depth_tick = llm_section.depth_tick
#: Colours of a chart's measured curves (p99 first); the target is ERROR_COLOR, the bound BOUND_COLOR.
CURVE_COLORS = ("#2563eb", "#16a34a")
BOUND_COLOR = "#6b7280"
#: A chart never gets lower than this: below it the axis labels take the plot's room.
PLOT_MIN_HEIGHT_PX = 190
#: The what-runs-here table shows a few rows at least; below that the page scrolls.
FITS_MIN_HEIGHT_PX = 160
#: Charts side by side: two keep each chart wide enough for its axis ticks at 1024 pixels.
COLUMNS = 2
_DASH, _DOT = "╌╌", "┈┈"


def summary_text(document: dict[str, Any]) -> str:
    """One line: each figure's fraction of its bound and the serving verdict."""
    runs = llm_section.build([document])
    if not runs:
        return "This run measured nothing to draw."
    run = runs[0]
    parts = [f"{name}: {value} ({fraction.split(' of ')[0]} of its bound)" for name, value, _, fraction in run.figures]
    text = " · ".join(parts)
    text += f". Serving: {run.largest}." if run.largest else "."
    text += f" Limits measured in the run: {run.limits}."
    text += f" {run.fits}." if run.fits else ""
    text += f" {run.reduced}." if run.reduced else ""
    return text + "".join(f" Inconsistent: {disagreement}." for disagreement in run.disagreements)


def heading_text(document: dict[str, Any]) -> str:
    """What ran, in bold, and when: the page names the run its charts show."""
    return f"<b>{escape(llm_section.subject(document))}</b> · {escape(describe.date_text(document))}"


def _key(color: str, glyph: str, label: str) -> str:
    return f'<span style="color:{color}">{glyph}</span>&nbsp;{escape(label)}'


class LlmView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The whole page scrolls as one: in a short lower pane the heading and the verdicts come first, the
        # charts below them.
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        self.heading = text_label()
        layout.addWidget(self.heading)
        self.summary = text_label()
        layout.addWidget(self.summary)
        self.plots = [CurvePlot() for _ in range(4)]
        # Titles and legends are wrapped labels above the plots: inside a plot they keep it from shrinking,
        # and the plots beside it would cover their right-hand side.
        self.titles = [QLabel() for _ in self.plots]
        self.legends = [QLabel() for _ in self.plots]
        self.columns = []
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        for index, (plot, title, legend) in enumerate(zip(self.plots, self.titles, self.legends)):
            plot.plotItem.legend.setVisible(False)  # the legend line above says what each line is
            plot.setMinimumHeight(PLOT_MIN_HEIGHT_PX)
            title.setWordWrap(True)
            legend.setWordWrap(True)
            column = QWidget()
            stack = QVBoxLayout(column)
            stack.setContentsMargins(0, 0, 0, 0)
            stack.setSpacing(1)
            stack.addWidget(title)
            stack.addWidget(legend)
            stack.addWidget(plot, 1)
            self.columns.append(column)
            grid.addWidget(column, index // COLUMNS, index % COLUMNS)
        for column in range(COLUMNS):
            grid.setColumnStretch(column, 1)
        layout.addLayout(grid, 1)
        self.fits_title = QLabel()
        self.fits_title.setWordWrap(True)
        layout.addWidget(self.fits_title)
        self.fits = fit_table_view.new_table()
        self.fits.setMinimumHeight(FITS_MIN_HEIGHT_PX)
        layout.addWidget(self.fits)
        # On a small screen the page scrolls instead of squeezing each plot to its axes.
        self.scroll = scroll_page(self, page)
        self.document: dict[str, Any] | None = None

    def _show_fits(self, document: dict[str, Any]) -> None:
        """The run's "what runs here" table: each model × weights × context against this machine and two cards."""
        from hwbench_gui.engine.models.llm.infer_fits import fit_cells

        details = document.get("details") if isinstance(document.get("details"), dict) else {}
        fits = details.get("what_fits") if isinstance(details.get("what_fits"), dict) else {}
        rows = fits.get("table") if isinstance(fits.get("table"), list) else []
        self.fits_title.setText(f"<b>What runs here for inference</b> (batch 1, as llm.infer plans it: weights + KV "
                                f"cache + workspace) against {escape(str(fits.get('table_against', '')))}"
                                if rows else "")
        self.fits.setVisible(bool(rows))
        fit_table_view.fill(self.fits, *(fit_cells(rows) if rows else ([], [])))

    def show_machine(self, title: str, headers: list[str], rows: list[list[str]]) -> None:
        """Before any run (llm.infer chosen in the catalogue): what runs on this machine, from its memory alone."""
        if self.document is not None:
            return
        for column in self.columns:
            column.setVisible(False)
        self.heading.setText("<b>Before a run</b>")
        self.summary.setText("Which model, weights and context this machine holds for inference, by llm.infer's "
                             "memory plan (a run checks it again, and refuses with the arithmetic what does not fit; "
                             "the command hwbench fits prints the same table).")
        self.fits_title.setText(f"<b>{escape(title)}</b>")
        self.fits.setVisible(True)
        fit_table_view.fill(self.fits, headers, rows)

    def set_document(self, document: dict[str, Any]) -> None:
        self.document = document
        found = document_check.problem(document)
        if found:  # a document given without the load's check: said, never half drawn
            for column in self.columns:
                column.setVisible(False)
            self.heading.setText("")
            self.summary.setText(f"This run cannot be shown: {escape(found)}")
            self.fits_title.setText("")
            self.fits.setVisible(False)
            return
        self.heading.setText(heading_text(document))
        self._show_fits(document)
        charts = llm_section.depth_curves(document) + llm_section.serving_charts(document)
        for plot, title, legend, column, spec in zip(self.plots, self.titles, self.legends, self.columns,
                                                     charts + [None] * len(self.plots)):
            column.setVisible(spec is not None)
            if spec is not None:
                legend.setText(self._draw(plot, spec))
                title.setText(f"<b>{escape(spec.short_title or spec.title)}</b>")
        self.summary.setText(summary_text(document))

    def _draw(self, plot: CurvePlot, spec: llm_section.CurveChart) -> str:
        """Draw ``spec`` on ``plot``; its legend, as rich text."""
        plot.clear()
        plot._drawn = None  # not what draw_curves drew: a later draw_curves must draw again
        plot.x_axis.integer = False
        plot.setLogMode(x=spec.x_log, y=False)
        plot.setLabel("left", spec.y_label)
        measured = [c for c in spec.curves if not c.bound]
        bounds = [c for c in spec.curves if c.bound]
        depth = llm_section.one_depth([spec]) if spec.target_y is None else None
        keys = []
        foreground = plot_colors(self.palette())[1]
        if depth is not None:  # one depth: a bar, its bound a dashed level across it
            plot.setLabel("bottom", "context depth (the one measured)")
            plot.addItem(pg.BarGraphItem(x=[0.0], height=[measured[0].y[0]], width=0.5,
                                         brush=CURVE_COLORS[0], pen=pg.mkPen(CURVE_COLORS[0])))
            keys.append(_key(CURVE_COLORS[0], "█", measured[0].label))
            points = [(0.0, measured[0].y[0])]
            for curve in bounds:
                plot.plot([-0.35, 0.35], [curve.y[0]] * 2,
                          pen=pg.mkPen(BOUND_COLOR, width=2, style=Qt.PenStyle.DashLine))
                keys.append(_key(BOUND_COLOR, _DASH, curve.label))
            plot.setXRange(-0.75, 0.75, padding=0)
            plot.getAxis("bottom").setTicks([[(0.0, f"depth {depth_tick(depth)}")], []])
        else:
            plot.setLabel("bottom", spec.x_label)
            for color, curve in zip(CURVE_COLORS, measured):
                plot.plot(np.array(curve.x, dtype=float), np.array(curve.y, dtype=float),
                          pen=pg.mkPen(color, width=2), symbol="o", symbolSize=6, symbolBrush=color)
                keys.append(_key(color, "━●━", curve.label))
            for curve in bounds:
                plot.plot(curve.x, curve.y, pen=pg.mkPen(BOUND_COLOR, width=2, style=Qt.PenStyle.DashLine))
                keys.append(_key(BOUND_COLOR, _DASH, curve.label))
            points = list(zip(measured[0].x, measured[0].y))
            if bounds:  # ticks at the depths measured, 4096 as "4k": automatic ticks of 5000s run together
                plot.getAxis("bottom").setTicks([[(x, depth_tick(x)) for x in measured[0].x], []])
            else:
                plot.getAxis("bottom").setTicks(None)
            plot.enableAutoRange(axis="x")
        if spec.target_y is not None:
            plot.addItem(pg.InfiniteLine(spec.target_y, angle=0,
                                         pen=pg.mkPen(ERROR_COLOR, width=2, style=Qt.PenStyle.DotLine)))
            keys.append(_key(ERROR_COLOR, _DOT, spec.target_label))
        # from zero to above the highest bound or target, so the height of a point is its share of what is
        # allowed and the target line is never on the frame
        top = max([y for c in spec.curves for y in c.y] + [spec.target_y or 0.0, 0.0])
        plot.setYRange(0, 1.12 * top if top > 0 else 1.0, padding=0)
        last = len(spec.point_labels) - 1
        for index, ((x, y), text) in enumerate(zip(points, spec.point_labels)):
            # the last point's label sits to its left, inside the plot
            label = pg.TextItem(text, color=foreground, anchor=(1 if index == last and last else 0, 1))
            label.setPos(x, y)
            plot.addItem(label)
        return " &nbsp; ".join(keys)


def has_llm_curves(document: dict[str, Any]) -> bool:
    """Whether ``document`` is a finished llm.infer run (it has curves for the "Language model" page)."""
    return (document.get("benchmark") or {}).get("id") == BENCH_ID and document.get("status") == "ok"


def _show_machine(page: LlmView) -> None:
    """What runs on this machine, before a run (the catalogue chose llm.infer)."""
    from hwbench_gui.engine.models.llm.infer_fits import fit_table_here

    page.show_machine(*fit_table_here())


PAGE = FamilyPage("Language model", LlmView, has_llm_curves,
                  lambda page, document, _others: page.set_document(document), on_chosen=_show_machine)
