"""The largest batch that fits before out-of-memory: doubling, then binary search, each try a child run.

:func:`search_max_batch` is the search alone (any ``fits(batch) -> bool``, from
:mod:`hwbench_gui.engine.measure.largest_fit`); :func:`max_batch` runs it
with every try as a short benchmark run through the runner, so an OOM in one try cannot poison the
next (each child starts with an empty GPU).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

from hwbench_gui.engine.measure.largest_fit import MaxBatchResult, search_max_batch

__all__ = ["MaxBatchError", "MaxBatchResult", "max_batch", "search_max_batch"]


class MaxBatchError(RuntimeError):
    """A try failed for a reason other than out-of-memory (so the search cannot go on)."""


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
