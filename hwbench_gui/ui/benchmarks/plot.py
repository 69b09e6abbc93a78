"""The Benchmarks tab's plot: live points of the running benchmark, or the series of a saved result."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from hwbench_gui.ui.plot_paint import cache_axes
from hwbench_gui.ui.theme import on_theme_changed, plot_colors

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d")
#: Keys of a metric event that say where on a sweep the point lies: (key, axis label, log axis, integer axis).
_SWEEP_KEYS = (
    ("x", None, False, False),
    ("bytes", "transfer size (bytes)", True, False),
    ("size", "matrix size (n)", True, True),
    ("threads", "threads", False, True),
    ("workers", "workers", False, True),
    ("repeat", "repeat", False, True),
)


class IntegerAxis(pg.AxisItem):
    """An axis that, when :attr:`integer` is set, puts ticks on whole numbers only (threads, workers)."""

    integer = False

    def tickValues(self, minVal, maxVal, size):  # noqa: N802,N803 (pyqtgraph's names)
        levels = super().tickValues(minVal, maxVal, size)
        if not self.integer or self.logMode:
            return levels
        kept = [(spacing, [v for v in values if float(v).is_integer()]) for spacing, values in levels
                if spacing >= 1]
        if not kept:
            kept = [(1.0, [float(v) for v in range(math.ceil(minVal), math.floor(maxVal) + 1)])]
        return kept


def sweep_x(event: dict[str, Any], elapsed_s: float) -> tuple[float, str, bool, bool]:
    """(x, axis label, log axis, integer axis) of a live metric point: the sweep variable the event
    carries (bytes, size, threads, workers, repeat), else the seconds since the run started."""
    for key, label, x_log, integer in _SWEEP_KEYS:
        value = event.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), label or str(event.get("x_label") or "x"), bool(event.get("x_log", x_log)), integer
    return elapsed_s, "elapsed (s)", False, False


def _as_floats(values) -> np.ndarray:
    """JSON nulls (points that could not be measured) become NaN: pyqtgraph crashes on None."""
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


class CurvePlot(pg.PlotWidget):
    """Curves against a sweep variable; ``x_axis`` is the bottom axis (integer ticks for counts)."""

    def __init__(self, parent=None) -> None:
        x_axis = IntegerAxis("bottom")
        super().__init__(parent, axisItems={"bottom": x_axis})
        self.x_axis = x_axis
        self._live_points: dict[str, tuple[list[float], list[float]]] = {}
        self._live_axis: tuple[str, bool, bool] | None = None
        self._drawn: tuple | None = None  # what draw_curves drew last
        self.showGrid(x=True, y=True, alpha=0.25)
        self.addLegend(offset=(10, 10))
        cache_axes(self)
        self.apply_colors()
        on_theme_changed(self, lambda _palette: self.apply_colors())

    def start_live(self, title: str) -> None:
        """A new run starts on an empty plot: no curves, title, axis labels or log scale of the last one."""
        self._live_points.clear()
        self._live_axis = None
        self._drawn = None
        self.clear()
        self.setLogMode(x=False, y=False)
        self.x_axis.integer = False
        self.setTitle(f"{title} (live)")
        self.setLabel("bottom", "")
        self.setLabel("left", "")
        self.enableAutoRange()

    def add_live_point(self, event: dict[str, Any], elapsed_s: float) -> None:
        """Add a metric event of the running benchmark to its curve (named by its series or name)."""
        value = event.get("value")
        if value is None:
            return
        label = str(event.get("series") or event.get("name"))
        x, x_label, x_log, integer = sweep_x(event, elapsed_s)
        if self._live_axis is None:
            self._live_axis = (x_label, x_log, integer)
        elif self._live_axis[0] != x_label:  # metrics of one run on different sweeps: fall back to time
            x, (x_label, x_log, integer) = elapsed_s, ("elapsed (s)", False, False)
            self._live_axis = (x_label, x_log, integer)
        xs, ys = self._live_points.setdefault(label, ([], []))
        xs.append(x)
        ys.append(float(value))
        self.draw_curves([(label, xs, ys) for label, (xs, ys) in self._live_points.items()],
                         x_label=x_label, y_label=str(event.get("unit", "")), x_log=x_log, integer_x=integer)

    def show_document(self, document: dict[str, Any]) -> None:
        """Draw a result document's series; a document without series leaves the plot as it is."""
        series = [s for s in document.get("series") or [] if isinstance(s, dict)]
        if not series:
            return
        first = series[0]
        # One plot holds one pair of axes: series measured against others (a serving curve beside tokens/s
        # against depth) belong to a page of their own.
        series = [s for s in series if (s.get("x_label"), s.get("y_label")) == (first.get("x_label"),
                                                                               first.get("y_label"))]
        xs = [x for s in series for x in s.get("x") or [] if x is not None]
        integer = bool(xs) and all(float(x).is_integer() for x in xs) and not first.get("x_log")
        self.draw_curves([(s["label"], s["x"], s["y"]) for s in series], x_label=first.get("x_label", ""),
                         y_label=first.get("y_label", ""), x_log=bool(first.get("x_log")), integer_x=integer)
        bench = document.get("benchmark", {})
        self.setTitle(bench.get("title") or bench.get("id", ""))

    def draw_curves(self, curves, x_label: str, y_label: str, x_log: bool, integer_x: bool = False) -> None:
        drawn = (tuple((label, tuple(xs), tuple(ys)) for label, xs, ys in curves), x_label, y_label, x_log, integer_x)
        if drawn == self._drawn:  # a finished run's document repeats what its live curves already show
            return
        self._drawn = drawn
        self.clear()
        self.x_axis.integer = integer_x
        self.setLogMode(x=x_log, y=False)
        self.setLabel("bottom", x_label)
        self.setLabel("left", y_label)
        for index, (label, xs, ys) in enumerate(curves):
            color = _PALETTE[index % len(_PALETTE)]
            self.plot(_as_floats(xs), _as_floats(ys), pen=pg.mkPen(color, width=2), symbol="o",
                      symbolSize=5, symbolBrush=color, name=label, connect="finite")

    def apply_colors(self) -> None:
        """pyqtgraph paints with colours of its own: take them from the current theme."""
        palette = QApplication.instance().palette() if QApplication.instance() else self.palette()
        background, foreground = plot_colors(palette)
        self.setBackground(background)
        axis_pen = pg.mkPen(foreground)
        for axis in ("left", "bottom"):
            self.getAxis(axis).setPen(axis_pen)
            self.getAxis(axis).setTextPen(axis_pen)
        title = self.getPlotItem().titleLabel
        title.setAttr("color", foreground)
        title.setText(title.text)
