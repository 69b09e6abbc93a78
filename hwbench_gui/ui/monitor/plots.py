"""The Monitor's plot grid: one :class:`~hwbench_gui.ui.monitor.plot.Plot` per :class:`PlotSpec`, time
axes linked, drawn from whatever (t, values) the tab hands it: the sampler's ring buffers or a recording.

Without GPU data the GPU plots are left out (they would be five empty frames repeating one error).
Hovering moves one cursor through every plot and :attr:`PlotGrid.hovered` carries the values there.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from hwbench_gui.ui.monitor.curves import STYLES, plot_specs
from hwbench_gui.ui.monitor.plot import Plot, set_curve
from hwbench_gui.ui.plot_paint import cache_axes
from hwbench_gui.ui.theme import on_theme_changed

#: How often the legends' current values are refreshed.
LEGEND_REFRESH_S = 0.5


class PlotGrid(QWidget):
    """The grid of live or recorded plots."""

    #: The readout text at the hovered time (values of the hovered plot's curves).
    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.ci.setSpacing(4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.layout_widget)
        self.plots: list[Plot] = []
        self.gpu_reason: str | None = None
        self._shown_t = np.empty(0)
        self._shown: dict[str, np.ndarray] = {}
        self._latest: dict[str, float] = {}
        self._last_legend_update = 0.0
        self.layout_widget.scene().sigMouseMoved.connect(self._on_mouse_moved)
        on_theme_changed(self, lambda palette: self.apply_palette(palette) if self.plots else None)

    def build(self, names: list[str], gpu_reason: str | None, interactive: bool) -> int:
        """Rebuild the grid for these metric names; returns how many plots it holds."""
        self.layout_widget.clear()
        self.plots = []
        specs = [spec for spec in plot_specs(names) if not (spec.gpu and gpu_reason)]
        for n, spec in enumerate(specs):
            columns = 3 if len(specs) <= 3 else 2  # host plots only: one row, room left for the tables
            item = self.layout_widget.addPlot(row=n // columns, col=n % columns,
                                              axisItems={"bottom": pg.DateAxisItem()})
            self.plots.append(Plot(spec, item))
            cache_axes(item)
            # Equal columns: the grid grows each column from its preferred width, which would
            # otherwise follow the curves' count of legend entries.
            item.setPreferredWidth(200)
            self.layout_widget.ci.layout.setColumnStretchFactor(n % columns, 1)
        self.gpu_reason = gpu_reason
        # Link the time axes of the plots that draw data; an N/A plot keeps its own 0..1 view.
        live = [p for p in self.plots if p.curves and not (p.spec.gpu and gpu_reason)]
        for p in live[1:]:
            p.item.setXLink(live[0].item)
        self._last_legend_update = 0.0
        self.apply_palette()
        self.set_interaction(interactive)
        return len(specs)

    def apply_palette(self, palette: QPalette | None = None) -> None:
        """Colours from ``palette`` (the new application palette on a theme change), else the widget's."""
        pal = palette if palette is not None else self.palette()
        bg, fg = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        faint = QColor(fg)
        faint.setAlpha(70)
        self.layout_widget.setBackground(bg)
        for p in self.plots:
            for side in ("left", "bottom", "right"):
                axis = p.item.getAxis(side)
                axis.setPen(fg)
                axis.setTextPen(fg)
            cursor_color = QColor(fg)
            cursor_color.setAlpha(140)
            p.cursor.setPen(pg.mkPen(cursor_color, width=1))
            for curve, data_item in p.curves:
                color = QColor(curve.color) if curve.color else faint
                data_item.setPen(pg.mkPen(color, width=curve.width, style=STYLES[curve.style]))
            p.set_title(fg.name(), self._latest)
            p.set_unavailable(None if p.curves else "not in this data", fg)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.PaletteChange and self.plots:
            self.apply_palette()
        super().changeEvent(event)

    def set_interaction(self, enabled: bool) -> None:
        """Pan and zoom with the mouse (paused or showing a recording), or not (following live data)."""
        for p in self.plots:
            p.item.setMouseEnabled(x=enabled, y=enabled)

    def plotted_metrics(self) -> list[str]:
        return [c.metric for p in self.plots for c, _ in p.curves]

    def draw(self, t: np.ndarray, values: dict[str, np.ndarray], x0: float, x1: float,
             force_legend: bool = False, only: int | None = None) -> None:
        """Show ``values`` (by metric, sampled at ``t``) over the time range ``x0``..``x1``; ``only``: in
        the plot of that index alone (the others keep what they show)."""
        self._shown_t, self._shown = t, values
        if only is None or only == 0:
            self._update_legends(values, force=force_legend)
        for index, p in enumerate(self.plots):
            if (p.spec.gpu and self.gpu_reason) or (only is not None and index != only):
                continue
            for curve, data_item in p.curves:
                y = values[curve.metric]
                set_curve(data_item, t, y / curve.scale if curve.scale != 1.0 else y)
            if p.curves:
                p.item.setXRange(x0, x1, padding=0)
                p.item.enableAutoRange(axis="y")
                if p.right_vb is not None:
                    p.right_vb.enableAutoRange(axis="y")

    def _update_legends(self, values: dict[str, np.ndarray], force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_legend_update < LEGEND_REFRESH_S:
            return
        self._last_legend_update = now
        latest = {}
        for metric, y in values.items():
            finite = y[np.isfinite(y)] if y.size else y
            latest[metric] = float(finite[-1]) if finite.size else math.nan
        self._latest = latest
        for p in self.plots:
            p.set_title(p.fg, latest)

    def _on_mouse_moved(self, pos) -> None:
        if self._shown_t.size == 0:
            return
        hovered = next((p for p in self.plots if p.item.sceneBoundingRect().contains(pos)), None)
        if hovered is None:
            return
        x = hovered.item.vb.mapSceneToView(pos).x()
        for p in self.plots:
            p.cursor.setPos(x)
            p.cursor.show()
        self.hovered.emit(self.readout_at(x, hovered.spec.key))

    def readout_at(self, x: float, plot_key: str) -> str:
        """Text of the values nearest to time ``x`` for the curves of plot ``plot_key``."""
        t = self._shown_t
        if t.size == 0:
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, t.size - 1))
        if i > 0 and abs(t[i - 1] - x) < abs(t[i] - x):
            i -= 1
        plot = next(p for p in self.plots if p.spec.key == plot_key)
        stamp = time.strftime("%H:%M:%S", time.localtime(t[i])) + f".{int((t[i] % 1) * 10)}"
        parts = []
        curves = plot.spec.curves
        if plot.spec.key == "cpu" and len(curves) > 9:  # many cores: total plus the busiest
            per_core = [c for c in curves if c.metric != "cpu_percent"]
            per_core.sort(key=lambda c: -np.nan_to_num(self._shown[c.metric][i], nan=-1))
            curves = [c for c in curves if c.metric == "cpu_percent"] + per_core[:8]
        for c in curves:
            v = self._shown[c.metric][i]
            unit = plot.spec.right_unit if c.right_axis else plot.spec.unit
            parts.append(f"{c.label} {'N/A' if math.isnan(v) else f'{v / c.scale:.4g}'} {unit}")
        return f"{stamp}  {plot.spec.title.split(' (')[0].split(':')[0]}:  " + " · ".join(parts)

    def items(self) -> dict[str, pg.PlotItem]:
        """The grid's PlotItems by key."""
        return {p.spec.key: p.item for p in self.plots}

    def curve_data(self, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The (x, y) a metric's curve currently shows, in display units."""
        for p in self.plots:
            for curve, data_item in p.curves:
                if curve.metric == metric:
                    x, y = data_item.getOriginalDataset()
                    return (np.empty(0), np.empty(0)) if x is None else (x, y)
        return None
