"""A queue of benchmark runs, each with its status and progress; plain callbacks, no Qt.

The GUI's Benchmarks tab and ``hwbench run --suite`` (through :func:`run_suite`) both
queue and run through this, so a suite is expanded and run by one piece of code. Runs execute one
at a time, each in its own child process through :func:`runner.run_benchmark`.

A run's status is ``queued``, then ``running``, then the status of its result document (``ok``,
``failed``, ``cancelled``). Listeners get a :class:`QueueChange` for every step, on the thread
that caused it: ``queued`` and ``removed`` on the caller of :meth:`RunQueue.add` /
:meth:`RunQueue.clear`, ``started`` on the caller of :meth:`RunQueue.take_next`, ``event`` (one
protocol event) and ``finished`` on the thread that executes the run.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from hwbench_gui.engine.run.suites import SuiteRun, expand_suite

QUEUED = "queued"
RUNNING = "running"


class RunSkipped(Exception):
    """Raised by an :meth:`RunQueue.add_suite` ``prepare`` callback: leave this run out (the message says why)."""


@dataclass(eq=False)
class QueuedRun:
    id: int
    bench_id: str
    params: dict[str, Any]
    label: str = ""
    #: The suite run it came from, when it was queued by :meth:`RunQueue.add_suite`.
    suite_run: SuiteRun | None = None
    #: ``queued``, ``running``, then the result document's status.
    status: str = QUEUED
    #: Progress of the running run, 0..1, and the child's last progress message.
    fraction: float = 0.0
    message: str = ""
    #: The :class:`~hwbench_gui.engine.run.runner.RunResult` once the run has ended.
    result: Any = None

    @property
    def document(self) -> dict[str, Any] | None:
        return self.result.document if self.result is not None else None


@dataclass(frozen=True)
class QueueChange:
    #: ``queued``, ``removed``, ``started``, ``event`` or ``finished``.
    kind: str
    run: QueuedRun
    #: The protocol event, for kind ``event``.
    event: dict[str, Any] | None = field(default=None, hash=False)


Listener = Callable[[QueueChange], None]


class RunQueue:
    """Runs waiting their turn. Thread-safe: add and clear from one thread while another executes."""

    def __init__(self, *, results_dir: str | os.PathLike | None = None, sampler: Any = None,
                 timeout_s: float | None = None) -> None:
        self.results_dir = results_dir
        self.sampler = sampler
        self.timeout_s = timeout_s
        self._pending: list[QueuedRun] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    # --- listeners -------------------------------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self, kind: str, run: QueuedRun, event: dict[str, Any] | None = None) -> None:
        change = QueueChange(kind, run, event)
        for listener in list(self._listeners):
            listener(change)

    # --- filling ---------------------------------------------------------------------------------
    def add(self, bench_id: str, params: dict[str, Any], label: str = "", *,
            suite_run: SuiteRun | None = None) -> QueuedRun:
        run = QueuedRun(next(self._ids), bench_id, params.copy(), label or bench_id, suite_run)
        with self._lock:
            self._pending.append(run)
        self._notify(QUEUED, run)
        return run

    def add_suite(self, name: str, overrides: dict[str, Any] | None = None, *,
                  prepare: Callable[[SuiteRun], dict[str, Any]] | None = None,
                  ) -> tuple[list[QueuedRun], list[tuple[SuiteRun, str]]]:
        """Queue every run of suite ``name`` (see :func:`suites.expand_suite` for ``overrides``).

        ``prepare(run)`` may return the parameters to queue instead of the suite's, or raise
        :class:`RunSkipped` to leave the run out. Returns (queued runs, [(skipped run, reason)]).
        ``KeyError`` for an unknown suite, before anything is queued.
        """
        queued, skipped = [], []
        for suite_run in expand_suite(name, overrides):
            params = suite_run.params
            if prepare is not None:
                try:
                    params = prepare(suite_run)
                except RunSkipped as exc:
                    skipped.append((suite_run, str(exc)))
                    continue
            queued.append(self.add(suite_run.bench_id, params, suite_run.label, suite_run=suite_run))
        return queued, skipped

    def pending(self) -> list[QueuedRun]:
        """The runs waiting, in order (a copy)."""
        with self._lock:
            return list(self._pending)

    def clear(self) -> list[QueuedRun]:
        """Drop every waiting run (a running one goes on); returns the dropped runs."""
        with self._lock:
            dropped, self._pending = self._pending, []
        for run in dropped:
            self._notify("removed", run)
        return dropped

    # --- running ---------------------------------------------------------------------------------
    def take_next(self) -> QueuedRun | None:
        """Take the first waiting run and mark it running (listeners hear ``started``); None when empty."""
        with self._lock:
            if not self._pending:
                return None
            run = self._pending.pop(0)
        run.status = RUNNING
        self._notify("started", run)
        return run

    def execute(self, run: QueuedRun, cancel: threading.Event | None = None) -> QueuedRun:
        """Run ``run`` (from :meth:`take_next`) in a child process; blocks until it has ended.

        Ends with ``run.result`` set and listeners told ``finished``. Should the runner itself raise
        (it turns every failure of the child into a document), the run is recorded as failed, or
        cancelled for KeyboardInterrupt, listeners are told, and the exception propagates.
        """
        from hwbench_gui.engine.run import runner

        def on_event(event: dict[str, Any]) -> None:
            if event.get("type") == "progress":
                run.fraction = max(0.0, min(1.0, float(event.get("fraction") or 0.0)))
                run.message = str(event.get("message", ""))
            self._notify("event", run, event)

        try:
            run.result = runner.run_benchmark(run.bench_id, run.params, on_event=on_event, cancel=cancel,
                                              timeout_s=self.timeout_s, results_dir=self.results_dir,
                                              sampler=self.sampler)
        except BaseException as exc:
            status = "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed"
            run.result = runner.RunResult(
                document={"status": status, "reason": f"{type(exc).__name__}: {exc}",
                          "benchmark": {"id": run.bench_id}, "params": run.params},
                path=None, status=status)
            run.status = status
            self._notify("finished", run)
            raise
        run.status = run.result.status
        self._notify("finished", run)
        return run

    def run_next(self, cancel: threading.Event | None = None) -> QueuedRun | None:
        """Take the next run and execute it; None when nothing was waiting."""
        run = self.take_next()
        return self.execute(run, cancel) if run is not None else None

    def run_all(self, cancel: threading.Event | None = None) -> list[QueuedRun]:
        """Execute waiting runs one after the other until none is left or ``cancel`` is set."""
        done = []
        while not (cancel is not None and cancel.is_set()):
            run = self.run_next(cancel)
            if run is None:
                break
            done.append(run)
        return done


def run_suite(name: str, overrides: dict[str, Any] | None = None, *,
              on_run: Callable[[int, int, SuiteRun], Callable[[dict[str, Any]], None] | None] | None = None,
              cancel: threading.Event | None = None, timeout_s: float | None = None,
              results_dir: str | os.PathLike | None = None) -> list[tuple[SuiteRun, Any]]:
    """Run every run of the suite one after the other through the runner (one child each).

    ``on_run(i, total, run)`` is called before each run and may return an event callback for it.
    Stops early when ``cancel`` is set. Returns ``[(run, RunResult)]``. The runs go through a
    :class:`RunQueue`, as the GUI's do.
    """
    queue = RunQueue(results_dir=results_dir, timeout_s=timeout_s)
    queued, _ = queue.add_suite(name, overrides)
    index = {id(run): i for i, run in enumerate(queued)}
    event_callbacks: dict[int, Callable[[dict[str, Any]], None] | None] = {}

    def listen(change) -> None:
        if change.kind == "started" and on_run is not None:
            event_callbacks[id(change.run)] = on_run(index[id(change.run)], len(queued), change.run.suite_run)
        elif change.kind == "event":
            callback = event_callbacks.get(id(change.run))
            if callback is not None:
                callback(change.event)

    queue.add_listener(listen)
    return [(run.suite_run, run.result) for run in queue.run_all(cancel)]
