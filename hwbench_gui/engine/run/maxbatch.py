"""The largest batch that fits before out-of-memory: doubling, then binary search, each try a child run.

:func:`search_max_batch` is the search alone (any ``fits(batch) -> bool``); :func:`max_batch` runs it
with every try as a short benchmark run through the runner, so an OOM in one try cannot poison the
next (each child starts with an empty GPU).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable


class MaxBatchError(RuntimeError):
    """A try failed for a reason other than out-of-memory (so the search cannot go on)."""


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


def max_batch(bench_id: str, params: dict[str, Any] | None = None, *, start: int = 8, limit: int = 8192,
              step: int = 8, steps: int = 3, warmup: int = 1, timeout_s: float | None = None,
              cancel: threading.Event | None = None, on_try: Callable[[int, dict[str, Any]], None] | None = None,
              results_dir: str | os.PathLike | None = None, save: bool = False) -> MaxBatchResult:
    """Search the largest ``batch`` of ``bench_id`` (other parameters as in ``params``) that runs
    without running out of memory. Each try is a run of ``steps`` timed steps after ``warmup``.

    ``on_try(batch, document)`` is called after each try. Raises MaxBatchError when a try fails
    for another reason (the document's reason is in the message), or is cancelled.
    """
    from hwbench_gui.engine.run import runner

    base = dict(params or {})
    documents: list[dict[str, Any]] = []

    def fits(batch: int) -> bool:
        result = runner.run_benchmark(bench_id, {**base, "batch": batch, "steps": steps, "warmup": warmup},
                                      cancel=cancel, timeout_s=timeout_s, results_dir=results_dir, save=save)
        doc = result.document
        documents.append(doc)
        if on_try is not None:
            on_try(batch, doc)
        if doc["status"] == "ok":
            return True
        if doc.get("error_kind") == "out_of_memory":
            return False
        raise MaxBatchError(f"batch {batch} failed ({doc.get('error_kind')}): {doc.get('reason')}")

    result = search_max_batch(fits, start=start, limit=limit, step=step)
    result.documents = documents
    return result
