"""Fixed-size history of samples: one timestamp column and one row of floats per metric.

Storage is preallocated numpy, so memory does not grow with run time. Rows are metric-major
(``values[metric, slot]``): a plot or a summary reads one metric's window as a contiguous slice.
Not thread-safe on its own; :class:`~hwbench_gui.engine.telemetry.sampler.Sampler` holds a lock.
"""

from __future__ import annotations

import numpy as np


class RingBuffer:
    """``capacity`` samples of ``n_metrics`` float64 values; NaN marks a missing value."""

    def __init__(self, n_metrics: int, capacity: int):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._t = np.full(capacity, np.nan)
        self._v = np.full((n_metrics, capacity), np.nan)
        self._head = 0  # slot the next sample goes into
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._t.shape[0]

    @property
    def nbytes(self) -> int:
        return self._t.nbytes + self._v.nbytes

    def __len__(self) -> int:
        return self._size

    def append(self, timestamp: float, row: np.ndarray) -> None:
        """Store one sample; the oldest is overwritten once the buffer is full."""
        self._t[self._head] = timestamp
        self._v[:, self._head] = row
        self._head = (self._head + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def grow(self, capacity: int) -> None:
        """Enlarge to ``capacity`` slots keeping every stored sample (never shrinks)."""
        if capacity <= self.capacity:
            return
        t, v = self.window()
        self._t = np.full(capacity, np.nan)
        self._v = np.full((self._v.shape[0], capacity), np.nan)
        n = t.shape[0]
        self._t[:n] = t
        self._v[:, :n] = v
        self._head = n % capacity
        self._size = n

    def _ordered_slices(self) -> list[slice]:
        """Physical slices that, concatenated, give the samples oldest first."""
        if self._size < self.capacity:
            return [slice(0, self._size)]
        return [slice(self._head, self.capacity), slice(0, self._head)]

    def timestamps(self) -> np.ndarray:
        """All stored timestamps, oldest first (a copy)."""
        return np.concatenate([self._t[s] for s in self._ordered_slices()])

    def window(
        self, since: float | None = None, until: float | None = None, rows: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Copies of ``(timestamps, values[rows])`` with ``since <= t <= until``, oldest first.

        Timestamps must have been appended in rising order (the sampler guarantees it).
        """
        t = self.timestamps()
        lo = 0 if since is None else int(np.searchsorted(t, since, side="left"))
        hi = t.shape[0] if until is None else int(np.searchsorted(t, until, side="right"))
        hi = max(lo, hi)
        pieces = []
        offset = 0
        for s in self._ordered_slices():
            # The part of the logical window [lo, hi) that lies in this physical slice.
            length = s.stop - s.start
            a, b = max(lo - offset, 0), min(hi - offset, length)
            if a < b:
                phys = slice(s.start + a, s.start + b)
                # Basic or mixed indexing: copies only the window, only the rows asked for.
                pieces.append(self._v[:, phys].copy() if rows is None else self._v[rows, phys])
            offset += length
        if not pieces:
            n_rows = self._v.shape[0] if rows is None else len(rows)
            return t[lo:hi], np.empty((n_rows, 0))
        values = pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=1)
        return t[lo:hi], values
