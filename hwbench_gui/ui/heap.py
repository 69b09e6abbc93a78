"""The garbage collector in a long-lived Qt window: collections on the GUI thread only, and short.

**Where.** Python's cyclic collector runs in whichever thread happens to allocate when a generation's count
passes its threshold. In this window that is often a worker thread (reading the results library, probing the
inventory, sampling telemetry), and a collection there destroys whatever cyclic garbage it finds, Qt wrappers of
closed pages included: their C++ destructors then run on the wrong thread and take Qt's locks while holding the
GIL. The GUI thread, building widgets, holds those locks and waits for the GIL: CI's window froze for good with
the GUI thread in ``QWidget.setToolTip`` and the library worker in ``json.loads`` (an allocation, so a collection).
So once Qt is up, automatic collection is off (:func:`collect_on_gui_thread`) and the GUI thread collects on a
timer with CPython's own thresholds (:func:`collect_due`), as Anki and other PyQt applications do.

**How long.** A full (generation-2) collection walks every object the process tracks. Once the window's tabs are
built that is some 175 000 objects (Qt wrappers, pyqtgraph items, the modules behind them), and a full collection
took 50-250 ms here, holding the GIL: the event loop stood still for it. Nearly all of those objects live as long
as the window, so they are moved out of the collector's view (:func:`freeze`, ``gc.freeze`` being made for
long-lived processes); full collections then walk only what came later: results, samples, the pages of a demo.

Nothing here imports Qt at module level: the test suite's fixtures call :func:`collect_due` without it.
"""

from __future__ import annotations

import gc

#: Milliseconds between two checks of the collector's counts on the GUI thread. CPython checks at every
#: allocation; a check here is three integer comparisons, and what waits for it is garbage, not work.
COLLECT_MS = 100

_timer = None  # the QTimer of collect_on_gui_thread, while its application lives


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, int, int]) -> int | None:
    """The generation CPython's automatic collector would collect at ``counts`` (``gc.get_count()``) under
    ``thresholds`` (``gc.get_threshold()``): none until the youngest count passes its threshold (or when the
    first threshold is 0, "collection off"), then the oldest generation whose own count has passed its threshold
    too, each older one only if the younger ones have."""
    if not thresholds[0] or counts[0] <= thresholds[0]:
        return None
    generation = 0
    while generation < 2 and counts[generation + 1] > thresholds[generation + 1]:
        generation += 1
    return generation


def collect_due() -> int | None:
    """Run the collection CPython would have run by now (:func:`due_generation`; a collection of generation g
    counts one for g+1, as the automatic one does). Returns the generation collected, or None when none was due.
    Call it on the GUI thread."""
    generation = due_generation(gc.get_count(), gc.get_threshold())
    if generation is not None:
        gc.collect(generation)
    return generation


def collect_on_gui_thread(app) -> bool:
    """Turn automatic collection off and collect on ``app``'s thread every :data:`COLLECT_MS` instead (see the
    module's doc). Call on the GUI thread once the QApplication exists; again is harmless. Returns True when this
    call started the timer."""
    global _timer
    import shiboken6
    from PySide6.QtCore import QTimer

    if _timer is not None and shiboken6.isValid(_timer):
        gc.disable()  # something (a test, a library) may have turned it back on
        return False
    gc.disable()
    _timer = QTimer(app)  # owned by the application, so it goes with it
    _timer.setObjectName("hwbench-gc")
    _timer.timeout.connect(collect_due)
    _timer.start(COLLECT_MS)
    return True


def freeze() -> int:
    """Collect once, then move every object that survived out of later collections; returns the
    number of frozen objects."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
