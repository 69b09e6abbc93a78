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

__all__ = ["MaxBatchError", "MaxBatchResult", "max_batch", "search_max_batch", "searched_in_run",
           "searched_result"]


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


#: What a try of a run that searches its own batch changes: the fewest timed steps its parameters allow
#: (the search, not the rate, is wanted), where the benchmark declares them.
SHORT_RUN = {"steps": 1, "repeats": 1, "warmup": 1, "min_time_s": 0.5}


def searched_result(document: dict[str, Any], param: str) -> MaxBatchResult:
    """The largest ``param`` a run that searched it found, from its document: the value the run used (a
    compiled step may have halved the search's), the smallest that failed, and the search's tries.
    Raises MaxBatchError with the run's reason when it failed or did not search (one line)."""
    bench = (document.get("benchmark") or {}).get("id") if isinstance(document.get("benchmark"), dict) else None
    if document.get("status") != "ok":
        raise MaxBatchError(f"{bench} failed ({document.get('error_kind')}): {document.get('reason')}")
    details = document.get("details") if isinstance(document.get("details"), dict) else {}
    search = details.get("micro_batch_search") if isinstance(details.get("micro_batch_search"), dict) else None
    used = (document.get("params") or {}).get(param)
    if not search or not isinstance(used, int) or isinstance(used, bool) or used < 1:
        raise MaxBatchError(f"{bench} searches its largest {param} on one CUDA GPU only; this run on "
                            f"{document.get('device')} took {param}={used} without trying any")
    tries = [(int(b), bool(ok)) for b, ok in search.get("tries") or []]
    halved = [int(b) for b in details.get("micro_batch_halved_from") or []]  # compiled, after the search
    failing = sorted({b for b, ok in tries if not ok and b > used} | {b for b in halved if b > used})
    return MaxBatchResult(used, failing[0] if failing else None, tries + [(b, False) for b in halved], [document])


def searched_in_run(bench_id: str, param: str, params: dict[str, Any] | None = None, *,
                    timeout_s: float | None = None, cancel: threading.Event | None = None,
                    results_dir: str | os.PathLike | None = None, save: bool = False) -> MaxBatchResult:
    """The largest ``param`` of ``bench_id``, a benchmark that searches it itself when asked for 0: one short
    child run (the fewest timed steps, :data:`SHORT_RUN`) whose own search is read back (:func:`searched_result`)."""
    from hwbench_gui.engine.run import registry, runner

    declared = {p.name for p in registry.get(bench_id).params}
    short = {name: value for name, value in SHORT_RUN.items() if name in declared}
    result = runner.run_benchmark(bench_id, {**dict(params or {}), **short, param: 0}, cancel=cancel,
                                  timeout_s=timeout_s, results_dir=results_dir, save=save)
    return searched_result(result.document, param)
