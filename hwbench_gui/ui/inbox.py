"""The GUI thread's inbox: how other threads hand work to the GUI thread without touching Qt.

A thread other than the GUI thread must not call into Qt with Python objects. Emitting a
``Signal(object)`` from a worker thread copies the Python argument inside Qt's signal machinery,
which takes the GIL while Qt's connection locks are about; the GUI thread meanwhile holds the GIL
while it builds widgets, whose constructors take those same locks. The two met: a test window froze
for good in CI with the GUI thread in ``QSpinBox``'s constructor waiting for a Qt mutex and a worker
thread waiting for the GIL, and a stress run (workers emitting while the GUI thread built widgets and
let ended workers go) crashed PySide 6.11 within a second (tests/test_gui_inbox.py).

So other threads only append to a :class:`collections.deque` (atomic under the GIL) and the GUI
thread drains it on a timer: every few milliseconds while a producer is alive or items wait, every
quarter second otherwise, as a safety net for a producer nobody registered. Items are delivered in
the order they were posted.
"""

from __future__ import annotations

import collections
import logging
import sys
import threading
import time
from typing import Any, Callable, Protocol

import shiboken6
from PySide6.QtCore import QCoreApplication, QTimer

from hwbench_gui.ui import heap

log = logging.getLogger(__name__)

#: Milliseconds between two drains while a producer is alive or items wait.
BUSY_MS = 8
#: Milliseconds between two drains otherwise.
IDLE_MS = 250
#: Seconds one drain may spend delivering; what is left waits for the next, so that a flood of
#: messages (a fast benchmark's progress, a demo's frames) never holds the window for long.
DRAIN_BUDGET_S = 0.010


class Producer(Protocol):
    def is_running(self) -> bool: ...


class GuiInbox:
    """Callables posted from any thread, called on the GUI thread (the thread that made the inbox)."""

    def __init__(self) -> None:
        self._items: collections.deque[tuple[Callable[..., Any], tuple]] = collections.deque()
        self._producers: list[Producer] = []
        self._owner = threading.get_ident()
        # The application owns the timer, so it goes with the application and never outlives it.
        self._timer = QTimer(QCoreApplication.instance())
        self._timer.timeout.connect(self.drain)
        self._timer.start(IDLE_MS)
        # The threads that post here allocate too: none of them may run the garbage collector (:mod:`.heap`).
        heap.collect_on_gui_thread(QCoreApplication.instance())

    def on_owner_thread(self) -> bool:
        return threading.get_ident() == self._owner

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the GUI thread soon. Safe from any thread; never calls into Qt."""
        self._items.append((fn, args))

    def watch(self, producer: Producer) -> None:
        """Drain often while ``producer.is_running()`` (GUI thread only)."""
        self._producers.append(producer)
        if self._timer.interval() != BUSY_MS:
            self._timer.start(BUSY_MS)

    def pending(self) -> int:
        return len(self._items)

    def drain(self) -> int:
        """Deliver what was posted before this call, for up to :data:`DRAIN_BUDGET_S`; returns how
        many items were delivered."""
        delivered = 0
        deadline = time.perf_counter() + DRAIN_BUDGET_S
        for _ in range(len(self._items)):  # what is posted meanwhile waits for the next drain
            if delivered and time.perf_counter() > deadline:
                break
            fn, args = self._items.popleft()
            try:
                fn(*args)
            except Exception:  # one failing slot must not keep the others from their items
                sys.excepthook(*sys.exc_info())
            delivered += 1
        self._producers = [p for p in self._producers if p.is_running()]
        interval = BUSY_MS if self._producers or self._items else IDLE_MS
        if self._timer.interval() != interval:
            self._timer.start(interval)
        return delivered


_inbox: GuiInbox | None = None


def gui_inbox() -> GuiInbox:
    """The process's inbox; made on first use, which must be on the GUI thread."""
    global _inbox
    if _inbox is None or not shiboken6.isValid(_inbox._timer):  # none yet, or its application has gone
        _inbox = GuiInbox()
    return _inbox
