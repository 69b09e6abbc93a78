"""Cheaper repaints of pyqtgraph plots when a tab comes forward.

Showing a tab repaints every plot on it, and most of that time goes to the axes: each replays its
tick labels and, with a grid, lines across the whole plot. Cached as a pixmap per view, an axis
that has not changed since it was last drawn is copied instead (its cache is redrawn when its
range or labels change, as before).

The cache has to survive the tab being hidden: a QGraphicsView sends its scene WindowDeactivate when
it is hidden and WindowActivate when it is shown again, and every QGraphicsWidget answers those with
``update()``, which throws its cache away (for a palette with other colours in an inactive window;
the axes draw with their own pens). So the cached axes ignore those two events; without that, each
tab switch redrew every axis (6 on the Snake page: about 16 of the switch's 30-45 ms here).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QGraphicsItem

_SIDES = ("left", "bottom", "right", "top")
_ACTIVATION = (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)


class _KeepCacheOnActivation(QObject):
    """Event filter that keeps a window (de)activation from invalidating an axis's pixmap cache."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        return event.type() in _ACTIVATION


def cache_axes(*items: pg.PlotItem | pg.PlotWidget) -> None:
    """Draw the axes of these plots from a pixmap cache that lasts while their tab is hidden (see the
    module's docstring)."""
    for item in items:
        plot_item = item.getPlotItem() if isinstance(item, pg.PlotWidget) else item
        for side in _SIDES:
            axis = plot_item.getAxis(side) if side in plot_item.axes else None
            if axis is not None:
                axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
                if not hasattr(axis, "_keep_cache_filter"):
                    axis._keep_cache_filter = _KeepCacheOnActivation(axis)
                    axis.installEventFilter(axis._keep_cache_filter)
