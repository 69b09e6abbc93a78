"""Cheaper repaints of pyqtgraph plots when a tab comes forward.

Showing a tab repaints every plot on it, and most of that time goes to the axes: each replays its
tick labels and, with a grid, lines across the whole plot. Cached as a pixmap per view, an axis
that has not changed since it was last drawn is copied instead (its cache is redrawn when its
range or labels change, as before).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

_SIDES = ("left", "bottom", "right", "top")


def cache_axes(*items: pg.PlotItem | pg.PlotWidget) -> None:
    """Draw the axes of these plots from a pixmap cache (see the module's docstring)."""
    for item in items:
        plot_item = item.getPlotItem() if isinstance(item, pg.PlotWidget) else item
        for side in _SIDES:
            axis = plot_item.getAxis(side) if side in plot_item.axes else None
            if axis is not None:
                axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
