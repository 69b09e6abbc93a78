"""One plot of the Monitor grid: its PlotItem, its curves, a right axis where it has one, the hover
cursor, and the legend line under its title (each curve named in its colour and line style with its
latest value, as nvitop shows them, outside the plot so it never covers data).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from hwbench_gui.ui.monitor.curves import CurveSpec, PlotSpec

#: The legend line's sample of each line style.
_GLYPHS = ("━━", "╍╍", "┅┅", "━·")
#: Curves named in one plot's legend line (the hover readout names them all).
LEGEND_MAX = 6
#: The legend's font size (points), as the title's HTML sets it.
LEGEND_PT = 8


class Plot:
    """One PlotItem of the grid with its curves (and a second ViewBox for a right axis)."""

    def __init__(self, spec: PlotSpec, item: pg.PlotItem):
        self.spec = spec
        self.item = item
        self.right_vb: pg.ViewBox | None = None
        self.curves: list[tuple[CurveSpec, pg.PlotDataItem]] = []
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.cursor.setZValue(10)
        self.cursor.hide()
        item.addItem(self.cursor, ignoreBounds=True)
        self.na_text: pg.TextItem | None = None
        item.setLabel("left", spec.unit)
        item.getAxis("left").enableAutoSIPrefix(False)  # "GiB (x0.001)" reads worse than 0.5
        item.showGrid(x=True, y=True, alpha=0.25)
        # Major ticks and grid lines only: the minor levels cost a third of each repaint of the
        # eight live plots (31 → 19 ms here) and add little to a 1-30 minute view.
        for axis in ("left", "bottom"):
            item.getAxis(axis).setStyle(maxTickLevel=0)
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        item.setMenuEnabled(False)
        if spec.right_unit:
            self.right_vb = pg.ViewBox()
            item.showAxis("right")
            item.scene().addItem(self.right_vb)
            item.getAxis("right").linkToView(self.right_vb)
            item.getAxis("right").setLabel(spec.right_unit)
            item.getAxis("right").enableAutoSIPrefix(False)
            self.right_vb.setXLink(item)
            item.vb.sigResized.connect(self._sync_right)
        self.legend_text = ""
        self.fg = "#000000"
        self._latest: dict[str, float] = {}
        self._titled_width = -1.0
        # The title never widens its column (pyqtgraph sets a label's minimum width to its text's):
        # the legend wraps to the plot's width instead, and is wrapped again when that changes.
        item.geometryChanged.connect(self._rewrap)
        for curve in spec.curves:
            data_item = pg.PlotDataItem(antialias=False)
            # Items outside the PlotItem's own ViewBox need these set on themselves.
            data_item.setDownsampling(auto=True, method="peak")
            data_item.setClipToView(True)
            if curve.right_axis and self.right_vb is not None:
                self.right_vb.addItem(data_item)
            else:
                item.addItem(data_item)
            self.curves.append((curve, data_item))

    def legend_entries(self, latest: dict[str, float]) -> list[tuple[CurveSpec, str]]:
        """(curve, "GPU0 util 45 %") for the named curves (per-core lines stay out: the readout names
        the busiest), at most :data:`LEGEND_MAX` with a value first."""
        entries = []
        for curve, _ in self.curves:
            if curve.color is None:
                continue
            value = latest.get(curve.metric, math.nan)
            unit = self.spec.right_unit if curve.right_axis else self.spec.unit
            entries.append((curve, f"{curve.label} {_value_text(value / curve.scale)} {unit}"))
        if len(entries) > LEGEND_MAX:
            entries = [e for e in entries if not e[1].endswith(f"– {self.spec.unit}")][:LEGEND_MAX]
        return entries

    def set_title(self, fg: str, latest: dict[str, float] | None = None) -> None:
        """Title, and below it the legend with the latest values, in as many lines as the plot's width
        needs."""
        self.fg = fg
        self._latest = latest or {}
        entries = self.legend_entries(self._latest)
        self.legend_text = "   ".join(text for _, text in entries)
        width = self.item.width()
        self._titled_width = width
        lines = legend_lines([f"{_GLYPHS[curve.style]} {text}" for curve, text in entries], width - 8)
        html_lines, n = [], 0
        for count in lines:
            html_lines.append(" &nbsp; ".join(
                f"<span style='color:{curve.color}'>{_GLYPHS[curve.style]}</span>&nbsp;"
                f"<span style='color:{fg}'>{text}</span>" for curve, text in entries[n:n + count]))
            n += count
        title = f"<span style='color:{fg}; font-size:9pt'>{self.spec.title}</span>"
        legend = "<br>".join(html_lines)
        self.item.setTitle(title + (f"<br><span style='font-size:{LEGEND_PT}pt'>{legend}</span>" if legend else ""))
        label = self.item.titleLabel
        label.setMinimumWidth(0)
        label.setPreferredWidth(0)

    def _rewrap(self) -> None:
        if abs(self.item.width() - self._titled_width) >= 1:
            self.set_title(self.fg, self._latest)

    def _sync_right(self) -> None:
        self.right_vb.setGeometry(self.item.vb.sceneBoundingRect())
        self.right_vb.linkedViewChanged(self.item.vb, self.right_vb.XAxis)

    def set_unavailable(self, reason: str | None, fg: QColor) -> None:
        if self.na_text is not None:
            self.item.removeItem(self.na_text)
            self.na_text = None
        self.item.setOpacity(1.0 if reason is None else 0.45)
        self.item.setEnabled(reason is None)
        if reason:
            self.na_text = pg.TextItem(_wrap(f"N/A: {reason}", 60), color=fg, anchor=(0.5, 0.5))
            self.item.addItem(self.na_text, ignoreBounds=True)
            self.item.setXRange(0, 1, padding=0)
            self.item.setYRange(0, 1, padding=0)
            self.na_text.setPos(0.5, 0.5)


def legend_lines(entries: list[str], width: float) -> list[int]:
    """How many of ``entries`` go on each line of a legend ``width`` pixels wide (at least one per
    line, however narrow)."""
    metrics = QFontMetricsF(_legend_font())
    gap = metrics.horizontalAdvance("   ")
    lines: list[int] = []
    used = 0.0
    for entry in entries:
        w = metrics.horizontalAdvance(entry)
        if lines and used + gap + w <= width:
            lines[-1] += 1
            used += gap + w
        else:
            lines.append(1)
            used = w
    return lines


def _legend_font() -> QFont:
    font = QFont()
    font.setPointSizeF(LEGEND_PT)
    return font


def _value_text(value: float) -> str:
    """"–" for no value, "1,980" from a thousand up, else three significant digits."""
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _wrap(text: str, width: int) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join(lines + [line])


def set_curve(data_item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    finite = np.isfinite(y)
    if finite.all():
        data_item.setData(x, y, connect="all", skipFiniteCheck=True)
    elif finite.any():
        # N/A gaps: break the line there (skipping the check would draw garbage through NaN).
        data_item.setData(x, y, connect="finite", skipFiniteCheck=False)
    else:
        data_item.setData([], [])

