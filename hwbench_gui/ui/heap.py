"""Keeping the garbage collector's full collections short in a long-lived window.

A full (generation-2) collection walks every object the process tracks. Once the window's tabs are
built that is some 175 000 objects (Qt wrappers, pyqtgraph items, the modules behind them), and a
full collection took 50-250 ms here, holding the GIL: the event loop stood still for it, whichever
thread triggered it. Nearly all of those objects live as long as the window, so they are moved out
of the collector's view (``gc.freeze``, made for long-lived processes); full collections then walk
only what came later: results, samples, the pages of a demo.
"""

from __future__ import annotations

import gc


def freeze() -> int:
    """Collect once, then move every object that survived out of later collections; returns the
    number of frozen objects."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
