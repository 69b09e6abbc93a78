"""The Snake page's training plots: score per episode with its running mean, loss and epsilon."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from hwbench_gui.ui.plot_paint import cache_axes
from hwbench_gui.ui.theme import on_theme_changed, plot_colors

#: Episodes in the running mean drawn over the scores.
MEAN_WINDOW = 100


class TrainingPlots(QWidget):
    """Draws the history the page keeps; it holds no data of its own beyond the curves."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.score_plot = pg.PlotWidget(title="Score per episode")
        self.score_plot.setLabel("bottom", "episode")
        self.score_curve = self.score_plot.plot(pen=pg.mkPen("#60a5fa", width=1))
        self.mean_curve = self.score_plot.plot(pen=pg.mkPen("#f59e0b", width=2), name=f"mean of {MEAN_WINDOW}")
        self.loss_plot = pg.PlotWidget(title="Loss (Huber)")
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen("#f87171", width=1))
        self.eps_plot = pg.PlotWidget(title="Epsilon")
        self.eps_curve = self.eps_plot.plot(pen=pg.mkPen("#a78bfa", width=1))
        for plot in (self.loss_plot, self.eps_plot):
            plot.setLabel("bottom", "training time", units="s")
        for plot in self.plots():
            plot.setDownsampling(mode="peak")
            plot.setClipToView(True)
            plot.showGrid(x=True, y=True, alpha=0.2)
        cache_axes(*self.plots())
        self._apply_plot_colors()
        on_theme_changed(self, self._apply_plot_colors)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.score_plot, 3)
        small_plots = QHBoxLayout()  # side by side: stacked, each is too flat to read on a laptop
        small_plots.addWidget(self.loss_plot)
        small_plots.addWidget(self.eps_plot)
        layout.addLayout(small_plots, 2)

    def plots(self) -> tuple[pg.PlotWidget, ...]:
        return self.score_plot, self.loss_plot, self.eps_plot

    def _apply_plot_colors(self, _palette=None) -> None:
        """Plots take the theme's base and text colours (pyqtgraph's default is black)."""
        from PySide6.QtWidgets import QApplication

        background, foreground = plot_colors(QApplication.instance().palette())
        for plot in self.plots():
            plot.setBackground(background)
            for side in ("left", "bottom"):
                plot.getAxis(side).setPen(foreground)
                plot.getAxis(side).setTextPen(foreground)
            title = plot.getPlotItem().titleLabel
            title.setAttr("color", foreground)
            title.setText(title.text)

    def draw(self, scores: list[int], loss: tuple[list[float], list[float]],
             epsilon: tuple[list[float], list[float]]) -> None:
        """``scores`` per episode; ``loss`` and ``epsilon`` as (training time in s, value) series."""
        scores = np.asarray(scores, dtype=float)
        if scores.size:
            x = np.arange(1, scores.size + 1, dtype=float)
            self.score_curve.setData(x, scores, skipFiniteCheck=True)
            csum = np.cumsum(np.insert(scores, 0, 0.0))
            window = np.minimum(np.arange(1, scores.size + 1), MEAN_WINDOW)
            mean = (csum[1:] - csum[np.arange(1, scores.size + 1) - window]) / window
            self.mean_curve.setData(x, mean, skipFiniteCheck=True)
        if loss[0]:
            self.loss_curve.setData(np.asarray(loss[0]), np.asarray(loss[1]), connect="finite")
            self.eps_curve.setData(np.asarray(epsilon[0]), np.asarray(epsilon[1]))
