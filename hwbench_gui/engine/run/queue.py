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

import importlib.util
import itertools
import math
import os
import statistics
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hwbench_gui.engine import frameworks
from hwbench_gui.engine.models import torch_ops
from hwbench_gui.engine.results import describe
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


# --- suites: what can run here, what is done, how far the whole is ---------------------------------

#: Framework parameter value -> (module find_spec looks for, what the user installs).
FRAMEWORK_MODULES = {"torch": ("torch", frameworks.not_in_bundle("PyTorch") if frameworks.is_frozen()
                                else "PyTorch is not installed"),
                     "tf": ("tensorflow", frameworks.missing_reason("TensorFlow", "pip install 'hwbench-gui[tf]'"))}

#: Precisions that only mean something on a GPU's tensor cores (on a CPU FP16 is emulated).
GPU_PRECISIONS = ("fp16-amp",)


def unavailable_here(run: SuiteRun, gpu_count: int) -> str | None:
    """Why ``run`` cannot run on this machine, found without importing a framework; None when it can.

    The benchmark's own availability, its framework installed (``find_spec``), and a GPU (NVML's
    count, ``gpu_count``) where the run asks for one: device cuda, gpus > 1, or FP16-AMP on the
    default device (the CPU would run it emulated; ask for device=cpu to measure that anyway).
    """
    from hwbench_gui.engine.run import registry

    bench = registry.get(run.bench_id)
    reason = registry.availability(bench)
    if reason:
        return reason
    framework = run.params.get("framework")
    if framework in FRAMEWORK_MODULES and importlib.util.find_spec(FRAMEWORK_MODULES[framework][0]) is None:
        return FRAMEWORK_MODULES[framework][1]
    if framework == "torch":  # the model benchmarks, whose PyTorch runs need torchvision's operators
        reason = torch_ops.unusable_reason()
        if reason:
            return reason
    if gpu_count == 0:
        values = bench.resolve_params(run.params)
        device = str(values.get("device", ""))
        if device.startswith("cuda"):
            return "no GPU found (NVML sees none) and the run asks for device=cuda"
        if int(values.get("gpus", 1) or 1) > 1:
            return f"no GPU found (NVML sees none) and the run asks for {values['gpus']} GPUs"
        if device == "auto" and values.get("precision") in GPU_PRECISIONS:
            return (f"no GPU found (NVML sees none): {values['precision'].upper()} is a GPU precision "
                    "(give device=cpu to run it on the CPU anyway)")
    return None


def _same_machine(doc: dict[str, Any]) -> bool:
    """A document from this machine: its hostname, or the same GPUs (by UUID) on a renamed host."""
    if doc.get("hostname") == socket.gethostname():
        return True
    from hwbench_gui.engine.results.document import machine_facts

    def uuids(inventory: Any) -> set[str]:
        gpus = inventory.get("gpus") if isinstance(inventory, dict) else None
        return {str(g.get("uuid")) for g in gpus or [] if isinstance(g, dict) and g.get("uuid")}

    ours = uuids(machine_facts().get("inventory"))
    return bool(ours) and uuids(doc.get("inventory")) == ours


def _measured_runs(run: SuiteRun, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``ok`` documents in ``docs`` that measured ``run``, on any machine.

    They must be of the same benchmark and code version and have asked for the same value of every
    parameter that decides comparability and of every parameter the suite run sets (what was asked:
    ``params_requested`` where the run chose a value itself)."""
    from hwbench_gui.engine.run import registry

    bench = registry.get(run.bench_id)
    wanted = bench.resolve_params(run.params)
    keys = set(bench.comparability_params()) | set(run.params)
    found = []
    for doc in docs:
        meta = doc.get("benchmark") or {}
        if doc.get("status") != "ok" or meta.get("id") != bench.id or str(meta.get("version")) != str(bench.version):
            continue
        asked = describe.asked_params(doc)
        try:
            if any(k not in asked or bench.param(k).parse(asked[k]) != wanted[k] for k in keys):
                continue
        except (KeyError, ValueError):  # ParamError is a ValueError: a value that no longer fits
            continue
        found.append(doc)
    return found


def finished_document(run: SuiteRun, docs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest ``ok`` document in ``docs`` that measured ``run`` on this machine, else None (see
    :func:`_measured_runs` for what must agree)."""
    best = None
    for doc in _measured_runs(run, docs):
        if not _same_machine(doc):
            continue
        if best is None or str(doc.get("started_at") or "") > str(best.get("started_at") or ""):
            best = doc
    return best


def _machine_like_this(doc: dict[str, Any]) -> bool:
    """A document from a machine with this one's GPUs (model and count), or, without a GPU on either,
    this one's CPU: its run times say how long the same run takes here."""
    from hwbench_gui.engine.results import describe
    from hwbench_gui.engine.results.document import machine_facts

    here = {"inventory": machine_facts().get("inventory")}
    gpus = describe.gpu_summary(here)
    if gpus != "no GPU":
        return describe.gpu_summary(doc) == gpus
    return describe.gpu_summary(doc) == "no GPU" and describe.cpu_summary(doc) == describe.cpu_summary(here)


def estimate_durations(runs: list[SuiteRun], own: list[dict[str, Any]],
                       references: list[dict[str, Any]] = ()) -> list[float | None]:
    """How long each of ``runs`` takes here, in seconds: the median wall time (``duration_s``) of the
    documents that measured it on this machine (``own``: the results folder), else on a machine like it
    (``references``: the shipped ones, of the same GPU); None where no such run was measured. Another
    machine's times say nothing about this one (an H200's ResNet-50 minute is hours on a CPU), so there
    is no guess beyond these."""
    def timed(docs: list[dict[str, Any]], run: SuiteRun) -> list[dict[str, Any]]:
        return [d for d in _measured_runs(run, docs)
                if isinstance(d.get("duration_s"), (int, float)) and math.isfinite(d["duration_s"])]

    estimates: list[float | None] = []
    for run in runs:
        here = [d["duration_s"] for d in timed(own, run) if _same_machine(d)]
        alike = here or [d["duration_s"] for d in timed([*own, *references], run) if _machine_like_this(d)]
        estimates.append(float(statistics.median(alike)) if alike else None)
    return estimates


@dataclass
class SuitePlan:
    """A suite's runs split three ways: to run now, cannot run here (with the reason), already done
    (resume: with the document that holds it)."""

    name: str
    to_run: list[SuiteRun]
    unavailable: list[tuple[SuiteRun, str]] = field(default_factory=list)
    finished: list[tuple[SuiteRun, dict[str, Any]]] = field(default_factory=list)
    #: How long each run of ``to_run`` takes here (:func:`estimate_durations`), None where unknown.
    estimates: list[float | None] = field(default_factory=list)

    @property
    def cells(self) -> int:
        return len(self.to_run) + len(self.unavailable) + len(self.finished)

    def expected_s(self) -> tuple[float, int]:
        """(seconds the runs to run are expected to take, counting the known ones; how many are unknown)."""
        known = [e for e in self.estimates[:len(self.to_run)] if e is not None]
        return sum(known), len(self.to_run) - len(known)

    def summary(self) -> str:
        """One line, the CLI's and the window's: ``"suite seed: 16 runs: 12 to run (about 25 min here), 4
        already done"``; what cannot run here is counted, and the time of runs never measured here is unknown."""
        parts = [f"{len(self.to_run)} to run" if self.to_run else "none to run"]
        if self.to_run:
            parts[0] += f" ({expected_text(*self.expected_s())})"
        if self.finished:
            parts.append(f"{len(self.finished)} already done")
        if self.unavailable:
            parts.append(f"{len(self.unavailable)} cannot run here")
        return f"suite {self.name}: {self.cells} runs: " + ", ".join(parts)


def expected_text(known_s: float, unknown: int) -> str:
    """``"about 25 min here"``, ``"about 25 min here, and 3 runs never timed here"``, ``"time unknown: never
    run on this machine or one like it"``."""
    from hwbench_gui.engine.models.common import format_eta

    if unknown and not known_s:
        return "time unknown: never run on this machine or one like it"
    about = "about " + format_eta(known_s).removeprefix("ETA ") + " here"
    return about + (f", and {unknown} run{'s' if unknown != 1 else ''} never timed here" if unknown else "")


def plan_suite(name: str, overrides: dict[str, Any] | None = None, *, results_dir: str | os.PathLike | None = None,
               resume: bool = False, gpu_count: int | None = None) -> SuitePlan:
    """Expand suite ``name`` and sort its runs: those that cannot run here (:func:`unavailable_here`),
    with ``resume`` those whose ``ok`` document is already in the results folder
    (:func:`finished_document`), and the rest, in the suite's order. ``KeyError`` for an unknown suite."""
    runs = expand_suite(name, overrides)
    if gpu_count is None:
        from hwbench_gui.engine import nvml

        gpu_count = nvml.device_count()
    from hwbench_gui.engine.results.library import list_results, reference_dir

    # The results folder says what is done (resume); it and the shipped references say how long runs take.
    listed = list_results(results_dir, include_reference=True).docs
    shipped = str(reference_dir())
    docs = [d for d in listed if not str(d.get("_path", "")).startswith(shipped)]
    references = [d for d in listed if str(d.get("_path", "")).startswith(shipped)]
    plan = SuitePlan(name, [])
    for run in runs:
        reason = unavailable_here(run, gpu_count)
        if reason:
            plan.unavailable.append((run, reason))
            continue
        done = finished_document(run, docs) if resume else None
        if done is not None:
            plan.finished.append((run, done))
        else:
            plan.to_run.append(run)
    plan.estimates = estimate_durations(plan.to_run, docs, references)
    return plan


def results_folder(results_dir: str | os.PathLike | None) -> Path:
    """The folder the suite's documents go to (``results_dir``, else the user's results folder)."""
    from hwbench_gui.engine.results.store import results_dir as default_dir

    return default_dir(results_dir)


class SuiteProgress:
    """One progress figure over a suite's runs, with one ETA.

    The run under way counts by its own fraction (the model benchmarks report a time-based one:
    elapsed / (elapsed + remaining)), so its remaining time is elapsed × (1 − f) / f, or before it has
    said, its estimate less the time it has run. Each run still waiting takes its estimate (how long the
    same run took on this machine or one like it: :func:`estimate_durations`); a run with none is
    counted as unknown, never guessed from the others (a CPU's Faster R-CNN is not its ResNet-50). Runs
    already done before a resume count as done. ``ended`` says how the suite ended, once it has.
    """

    def __init__(self, total: int, done_before: int = 0, clock: Callable[[], float] = time.monotonic,
                 estimates: list[float | None] | None = None) -> None:
        self.total, self.clock = total, clock
        self.done = done_before
        self.durations: list[float] = []
        self.current_start: float | None = None
        self.current_fraction = 0.0
        self.current_estimate: float | None = None
        self.label = ""
        #: Estimates of the runs not started yet, in order (None: unknown).
        self.waiting: list[float | None] = list(estimates) if estimates is not None else \
            [None] * max(0, total - done_before)
        self.ended: str | None = None  # "done" or "cancelled"
        self.dropped = 0  # waiting runs that left the queue without running

    def start(self, label: str) -> None:
        self.current_start, self.current_fraction, self.label = self.clock(), 0.0, label
        self.current_estimate = self.waiting.pop(0) if self.waiting else None

    def update(self, fraction: float) -> None:
        self.current_fraction = max(0.0, min(1.0, float(fraction)))

    def finish(self) -> None:
        if self.current_start is not None:
            self.durations.append(self.clock() - self.current_start)
        self.done += 1
        self.current_start, self.current_fraction, self.current_estimate = None, 0.0, None

    def drop(self, count: int) -> None:
        """``count`` waiting runs will not run (the queue was cleared): they leave the ETA, and the suite
        will end cancelled."""
        count = min(count, len(self.waiting))
        if count:
            del self.waiting[len(self.waiting) - count:]
            self.dropped += count

    def fraction(self) -> float:
        return min(1.0, (self.done + self.current_fraction) / self.total) if self.total else 1.0

    def remaining(self) -> tuple[float, int]:
        """(seconds left over the runs whose length is known, how many runs' length is unknown)."""
        seconds, unknown = 0.0, 0
        if self.current_start is not None:
            elapsed = self.clock() - self.current_start
            if self.current_fraction >= 0.02:
                seconds += elapsed * (1 - self.current_fraction) / self.current_fraction
            elif self.current_estimate is not None:
                seconds += max(0.0, self.current_estimate - elapsed)
            else:
                unknown += 1
        for estimate in self.waiting:
            if estimate is None:
                unknown += 1
            else:
                seconds += estimate
        return seconds, unknown

    def remaining_s(self) -> float | None:
        """Seconds left, None while any run's length is unknown."""
        seconds, unknown = self.remaining()
        return None if unknown else seconds

    def text(self) -> str:
        """``"suite 7/24 (29 %), ETA 12 min 05 s"``; ``"…, ETA 12 min 05 s + 3 runs never timed here"``;
        ``"…, ETA unknown: never run on this machine or one like it"``; once ended, ``"suite cancelled: 3 of
        16 runs done"`` (or ``done``)."""
        from hwbench_gui.engine.models.common import format_eta

        shown = min(self.total, self.done + (1 if self.current_start is not None else 0))
        head = f"suite {shown}/{self.total} ({self.fraction():.0%})"
        if self.ended:
            return f"suite {self.ended}: {self.done} of {self.total} runs done"
        seconds, unknown = self.remaining()
        if unknown and not seconds:
            return f"{head}, ETA unknown: never run on this machine or one like it"
        eta = format_eta(seconds)
        return f"{head}, {eta}" + (f" + {unknown} run{'s' if unknown != 1 else ''} never timed here" if unknown else "")


def run_suite(name: str, overrides: dict[str, Any] | None = None, *,
              on_run: Callable[[int, int, SuiteRun], Callable[[dict[str, Any]], None] | None] | None = None,
              cancel: threading.Event | None = None, timeout_s: float | None = None,
              results_dir: str | os.PathLike | None = None, plan: SuitePlan | None = None,
              ) -> list[tuple[SuiteRun, Any]]:
    """Run the suite's runs one after the other through the runner (one child each).

    ``plan`` (from :func:`plan_suite`) says which runs to run; without one, every run of the suite.
    ``on_run(i, total, run)`` is called before each run and may return an event callback for it.
    Stops early when ``cancel`` is set. Returns ``[(run, RunResult)]``. The runs go through a
    :class:`RunQueue`, as the GUI's do.
    """
    queue = RunQueue(results_dir=results_dir, timeout_s=timeout_s)
    if plan is None:
        queued, _ = queue.add_suite(name, overrides)
    else:
        queued = [queue.add(run.bench_id, run.params, run.label, suite_run=run) for run in plan.to_run]
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
