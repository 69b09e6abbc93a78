"""The telemetry sampler: one plain thread reading host, process-tree and GPU figures on a timer.

History lives in a preallocated ring buffer (its memory does not grow with run time). Listeners
are called on the sampler thread; GUI code must hand samples over to its own thread (the Monitor
tab does not even do that: it redraws from :meth:`Sampler.history` on a GUI timer).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from typing import Any, Callable

import numpy as np

from hwbench_gui.engine.telemetry.csv_export import write_history_csv
from hwbench_gui.engine.telemetry.gpu_metrics import GpuReader
from hwbench_gui.engine.telemetry.host_metrics import HostReader, ProcessTreeReader
from hwbench_gui.engine.telemetry.ring import RingBuffer
from hwbench_gui.engine.telemetry.summary import noise_summary, seed_figures, summarize

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 10.0

Sample = dict[str, Any]


def _check_interval(interval_s: float) -> float:
    interval_s = float(interval_s)
    if not (MIN_INTERVAL_S <= interval_s <= MAX_INTERVAL_S):
        raise ValueError(f"interval must be {MIN_INTERVAL_S} s to {MAX_INTERVAL_S} s, got {interval_s}")
    return interval_s


class Sampler:
    """Samples every ``interval_s`` seconds and keeps ``history_s`` seconds of history.

    A sample is a dict: ``"timestamp"`` (Unix seconds, strictly rising), every name in
    :meth:`metric_names` (float, or ``None`` for N/A) and ``"gpu{i}_throttle_reason_names"``
    (list of str, or ``None``). Rates (CPU %, disk and PCIe/NVLink bytes/s, process CPU %) cover
    the time since the previous sample. Thread-safe: any thread may call any method.
    """

    def __init__(self, interval_s: float = 0.5, history_s: float = 1800.0):
        self._interval_s = _check_interval(interval_s)
        if history_s <= 0:
            raise ValueError("history_s must be positive")
        self._history_s = float(history_s)
        self._host = HostReader()
        self._proc = ProcessTreeReader()
        self._gpu = GpuReader()
        self._names = self._host.names + self._proc.names + self._gpu.names
        self._lock = threading.Lock()
        self._ring = RingBuffer(len(self._names), self._capacity_for(self._interval_s))
        self._latest: Sample | None = None
        self._listeners: list[Callable[[Sample], None]] = []
        self._pending_watch: tuple[int | None] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        # Timestamps are wall-clock Unix seconds anchored once and advanced by the monotonic clock,
        # so they never go back when NTP steps the clock.
        self._wall0, self._mono0 = time.time(), time.monotonic()
        self._thread_cpu_s = 0.0
        self.last_sample_cost_s: float | None = None

    # -- configuration -------------------------------------------------------------------
    def _capacity_for(self, interval_s: float) -> int:
        return int(math.ceil(self._history_s / interval_s)) + 1

    @property
    def interval_s(self) -> float:
        return self._interval_s

    @property
    def history_s(self) -> float:
        return self._history_s

    @property
    def capacity(self) -> int:
        """Samples the ring holds; it grows once when the interval shrinks, never with run time."""
        return self._ring.capacity

    def set_interval(self, interval_s: float) -> None:
        """Change the interval (0.1 s to 10 s), also while running; the next sample follows the new one."""
        interval_s = _check_interval(interval_s)
        with self._lock:
            self._interval_s = interval_s
            self._ring.grow(self._capacity_for(interval_s))
        self._wake.set()

    def watch(self, pid: int | None) -> None:
        """Follow the CPU and RSS of ``pid`` and its descendants (``proc_*`` metrics); None stops."""
        self._pending_watch = (pid,)
        if not self.running:
            self._apply_watch()

    @property
    def watched_pid(self) -> int | None:
        pending = self._pending_watch
        return pending[0] if pending is not None else self._proc.pid

    def _apply_watch(self) -> None:
        pending, self._pending_watch = self._pending_watch, None
        if pending is not None:
            self._proc.watch(pending[0])

    def add_listener(self, callback: Callable[[Sample], None]) -> None:
        """``callback(sample)`` runs on the sampler thread after every sample; keep it short."""
        with self._lock:
            self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[Sample], None]) -> None:
        with self._lock:
            if callback in self._listeners:
                self._listeners.remove(callback)

    # -- what the machine offers ------------------------------------------------------------
    def metric_names(self) -> list[str]:
        return list(self._names)

    @property
    def gpu_count(self) -> int:
        return self._gpu.count

    @property
    def gpu_unavailable_reason(self) -> str | None:
        """Why there are no GPU metrics (from NVML), or None when there are."""
        return self._gpu.reason

    @property
    def cpu_count(self) -> int:
        return self._host.n_cores

    def notes(self) -> list[str]:
        """Where figures come from and why some are N/A (for logs and ``hwbench monitor``)."""
        notes = list(self._gpu.notes)
        if self._gpu.reason:
            notes.insert(0, f"no GPU metrics: {self._gpu.reason}")
        if self._proc._proc_children_ok is False:
            notes.append(
                "watched process: /proc/<pid>/task/<tid>/children missing; children found by a full "
                "process scan at most once a second"
            )
        return notes

    # -- running --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def thread_cpu_s(self) -> float:
        """CPU time the sampler thread has used since :meth:`start` (``time.thread_time``)."""
        return self._thread_cpu_s

    def start(self) -> None:
        """Start the sampler thread (a daemon, so a forgotten sampler never holds the process)."""
        if self.running:
            return
        self._stop.clear()
        self._wake.clear()
        self._thread_cpu_s = 0.0
        self._thread = threading.Thread(target=self._run, name="hwbench-telemetry", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop and join the thread (waits at most ``timeout_s``, plus any NVML call in flight)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        self._wake.set()
        thread.join(timeout_s)
        if not thread.is_alive():
            self._thread = None

    def _now(self, mono: float) -> float:
        return self._wall0 + (mono - self._mono0)

    def _run(self) -> None:
        cpu_start = time.thread_time()
        try:
            self._apply_watch()
            # Prime the delta-based readers so the first stored sample already has rates.
            self._read(time.monotonic())
            last = time.monotonic()
            next_t = last + self._interval_s
            while not self._stop.is_set():
                delay = next_t - time.monotonic()
                if delay > 0 and self._wake.wait(delay):
                    self._wake.clear()
                    next_t = last + self._interval_s  # new interval, or stop
                    continue
                if self._stop.is_set():
                    break
                last = time.monotonic()
                self._sample(last)
                self._thread_cpu_s = time.thread_time() - cpu_start
                # Keep the cadence; when behind (slow sample, suspended machine) go once at once,
                # never in a burst of catch-up samples.
                next_t = max(next_t + self._interval_s, time.monotonic())
        except Exception:
            log.exception("telemetry sampler stopped on an error")
        finally:
            self._thread_cpu_s = time.thread_time() - cpu_start

    def _read(self, mono: float) -> tuple[dict[str, Any], dict[int, list[str] | None]]:
        values: dict[str, Any] = {}
        self._host.read(mono, values)
        self._proc.read(mono, values)
        throttle = self._gpu.read(mono, values)
        self._others(values)
        return values, throttle

    def _others(self, values: dict[str, Any]) -> None:
        """What the rest of the machine used: CPU (percent of one core) beyond the watched tree and
        this app, and GPU compute processes that are neither (noise in a benchmark's figures)."""
        system, own = values.get("cpu_percent"), values.get("self_cpu_percent")
        if system is not None and own is not None:
            tree = values.get("proc_cpu_percent") or 0.0
            values["others_cpu_percent"] = max(0.0, system * self._host.n_cores - tree - own)
        if self._gpu.count:
            mine = self._proc.tree_pids | {os.getpid()}
            # Only PIDs this process can see: in a container NVML may report the host's PIDs, which
            # must not make our own benchmark look like a stranger.
            others = {p["pid"] for p in self._gpu.processes() if p["pid"] not in mine and p.get("name")}
            values["others_gpu_processes"] = float(len(others))

    def _sample(self, mono: float) -> None:
        t0 = time.perf_counter()
        self._apply_watch()
        values, throttle = self._read(mono)
        ts = self._now(mono)
        nan = math.nan
        row = np.array([nan if (v := values.get(n)) is None else v for n in self._names], dtype=float)
        sample: Sample = {"timestamp": ts, **values}
        for i, names in throttle.items():
            sample[f"gpu{i}_throttle_reason_names"] = names
        with self._lock:
            self._ring.append(ts, row)
            self._latest = sample
            listeners = list(self._listeners)
        self.last_sample_cost_s = time.perf_counter() - t0
        for callback in listeners:
            try:
                callback(sample)
            except Exception:
                log.exception("telemetry listener %r failed", callback)

    def sample_once(self) -> Sample:
        """Take one sample now on the calling thread and store it (for tests and one-shot CLI use).

        Must not be called while the thread runs. Rates need a previous read, so the very first
        sample after construction has ``None`` rates.
        """
        if self.running:
            raise RuntimeError("sample_once() while the sampler thread runs")
        self._sample(time.monotonic())
        return self.latest()

    # -- reading back -------------------------------------------------------------------------
    def latest(self) -> Sample | None:
        with self._lock:
            return None if self._latest is None else dict(self._latest)

    def history(
        self, since: float | None = None, metrics: list[str] | None = None, until: float | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(timestamps, {metric: values})`` oldest first, NaN where N/A; copies, safe to keep.

        ``metrics`` limits the columns (cheaper for a plot); unknown names raise ``KeyError``.
        """
        names = self._names if metrics is None else list(metrics)
        index = {n: i for i, n in enumerate(self._names)}
        rows = [index[n] for n in names]
        with self._lock:
            t, v = self._ring.window(since, until, rows)
        return t, {n: v[j] for j, n in enumerate(names)}

    def summary(self, since: float | None = None, until: float | None = None) -> dict[str, dict[str, Any]]:
        """Per metric ``{"mean", "min", "max", "count"}`` over ``since <= t <= until`` (N/A left out)."""
        _, values = self.history(since, until=until)
        return summarize(values)

    def summary_for_result(self, since: float | None = None, until: float | None = None,
                           windows: list[tuple[float, float]] | None = None) -> dict[str, Any]:
        """What a benchmark result stores: interval, sample count, the seed's five figures (plus power
        and clocks), all metrics and the noise from other processes. With ``windows`` only samples
        inside one of those ``(start, end)`` spans count (a benchmark's timed phase)."""
        t, values = self.history(since, until=until)
        if windows is not None:
            inside = np.zeros(t.shape[0], dtype=bool)
            for start, end in windows:
                inside |= (t >= start) & (t <= end)
            t, values = t[inside], {k: v[inside] for k, v in values.items()}
        out: dict[str, Any] = {
            "scope": "whole run" if windows is None else "timed phase",
            "interval_s": self._interval_s,
            "samples": int(t.shape[0]),
            "since": None if t.shape[0] == 0 else float(t[0]),
            "until": None if t.shape[0] == 0 else float(t[-1]),
            "seed": seed_figures(values, self._gpu.count, self._gpu.reason),
            "metrics": summarize(values),
            "noise": noise_summary(values),
        }
        if windows is not None:
            out["windows"] = [[float(a), float(b)] for a, b in windows]
        if self._gpu.reason:
            out["gpu_unavailable_reason"] = self._gpu.reason
        return out

    def gpu_processes(self) -> list[dict[str, Any]]:
        """Latest per-process GPU memory: ``[{"gpu", "pid", "name", "used_bytes"}]``."""
        return self._gpu.processes()

    def write_csv(self, path: str | os.PathLike, since: float | None = None):
        """Write the history (from ``since``) as CSV, atomically; returns the path."""
        t, values = self.history(since)
        return write_history_csv(path, t, values)
