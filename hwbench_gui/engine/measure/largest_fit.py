"""The largest batch that fits: doubling, then bisection, over any ``fits(batch) -> bool``.

Shared by ``hwbench maxbatch`` (each try a child run, :mod:`hwbench_gui.engine.run.maxbatch`) and by
benchmarks that search in their own process (``llm.train``'s micro-batch), so both search the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class MaxBatchResult:
    """``largest`` fits (0: not even ``start``); ``smallest_failing`` did not (None: ``limit`` fit)."""

    largest: int
    smallest_failing: int | None
    tries: list[tuple[int, bool]] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)


def search_max_batch(fits: Callable[[int], bool], *, start: int = 1, limit: int = 1 << 16,
                     step: int = 1) -> MaxBatchResult:
    """Double from ``start`` until a batch does not fit (or ``limit``), then bisect until the gap
    between the largest fitting and the smallest failing batch is at most ``step``. When ``start``
    itself does not fit, bisect below it (``largest`` 0: not even batch 1 fits)."""
    if start < 1 or limit < start or step < 1:
        raise ValueError("need 1 <= start <= limit and step >= 1")
    tries: list[tuple[int, bool]] = []

    def attempt(batch: int) -> bool:
        ok = bool(fits(batch))
        tries.append((batch, ok))
        return ok

    low: int
    high: int | None
    if attempt(start):
        low, high = start, None
        while high is None:
            nxt = min(low * 2, limit)
            if nxt == low:
                return MaxBatchResult(low, None, tries)
            if attempt(nxt):
                low = nxt
            else:
                high = nxt
    else:
        low, high = 0, start  # search below start
    while high - low > step:
        mid = (low + high) // 2
        if attempt(mid):
            low = mid
        else:
            high = mid
    return MaxBatchResult(low, high, tries)
