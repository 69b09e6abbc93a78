"""Getting a hidden page ready for its first show, one piece per event-loop turn.

The first time a page is shown, Qt polishes and lays out its widgets, and pyqtgraph lays out each
plot and draws every axis (ticks, labels, grid) before the axes' pixmap caches exist: 70-150 ms for
the Snake page in one turn, against 20-40 ms for any later show. A page built while it is hidden (a
tab built before the user opens it) is prepared instead while the window is idle: a first turn lays
it out at the size it will be shown at, then each graphics view on it is rendered off screen in a
turn of its own, which leaves the plots laid out and their axes cached (:mod:`.plot_paint`). Its
first show then costs what a later one does. A page shown before its preparation ends just stops
being prepared: showing it does the rest, as it did before.
"""

from __future__ import annotations

from typing import Callable

import shiboken6
from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QGraphicsView, QWidget

from hwbench_gui.ui.turns import next_turn


def preparation_steps(page: QWidget, size: Callable[[], QSize]) -> list[Callable[[], None]]:
    """The steps that get the hidden ``page`` ready to be shown at ``size()``, in order: lay it out,
    then render each graphics view on it (one view per step, two steps per view)."""

    def lay_out() -> None:
        page.resize(size())
        page.grab(QRect(0, 0, 1, 1))  # polishes the page and lays it out (pending resizes), paints 1 px

    def render(view: QGraphicsView) -> None:
        if shiboken6.isValid(view):  # the page may have replaced it since (the Monitor rebuilds its grid)
            view.grab()

    # Twice each: a pyqtgraph axis sizes itself to its tick labels while it draws them the first time,
    # which lays the plot out anew; the second rendering draws (and caches) the axes at their final size.
    views = page.findChildren(QGraphicsView)
    return [lay_out] + [lambda v=view: render(v) for view in views for _ in range(2)]


def prepare_in_steps(page: QWidget, size: Callable[[], QSize]) -> None:
    """Run the preparation steps of the hidden ``page``, one per event-loop turn, until it is shown."""
    pending = preparation_steps(page, size)

    def next_step() -> None:
        if page.isVisible() or not pending:
            return
        pending.pop(0)()
        if pending:
            next_turn(page, next_step)

    next_turn(page, next_step)
