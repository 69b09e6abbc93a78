"""Work split over event-loop turns, so that input and repaints come in between.

In Qt 6 a 0 ms single-shot timer is a posted event, and the posted events queued while posted events
are being delivered go out in the same pass: a chain of them runs back to back, with no repaint or
input in between (a run's end, split into three 0 ms steps, still stalled the window 55 ms in one
pass). A step that must leave the loop a turn is queued on a real timer a few milliseconds out.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

#: Milliseconds from one step to the next.
TURN_GAP_MS = 5


def next_turn(context: QObject, step: Callable[[], None], gap_ms: int = TURN_GAP_MS) -> None:
    """Run ``step`` in a later event-loop turn (dropped if ``context`` is deleted first)."""
    QTimer.singleShot(gap_ms, context, step)
