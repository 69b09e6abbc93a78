"""Runs one benchmark in a child process and turns what happens into a result document.

Qt-free: the CLI calls :func:`run_benchmark` on its main thread, the GUI from a QThread. The
child is ``python -m hwbench_gui --hwbench-worker SPEC`` (frozen: ``<exe> --hwbench-worker SPEC``)
in a session / process group of its own, so cancel and timeout can end it and everything it
started (data-loader workers, a ``torchrun``-style launcher's ranks) at once. Its stdout and
stderr are read by two threads into a queue; the loop here wakes at least every 100 ms to look
at the cancel event and the deadline, so nothing ever blocks on a child that hangs.
"""

from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

from hwbench_gui.engine.child import child_env, worker_command
from hwbench_gui.engine.health import normal
from hwbench_gui.engine.results import document as result_document
from hwbench_gui.engine.results import store
from hwbench_gui.engine.run import protocol, registry
from hwbench_gui.engine.spec.benchmark import Benchmark
from hwbench_gui.engine.telemetry.summary import busy_warning

#: Lines of the child's log kept for the document of a run that did not end ok.
LOG_TAIL_LINES = 200
#: How often the loop looks at cancel and the deadline.
POLL_S = 0.1
#: SIGTERM first; SIGKILL to the whole group if the child is still there after this.
TERM_GRACE_S = 2.0
#: How long a child that reported its result and closed its output may take to end by itself before
#: it is killed and the document says so. Tearing down dozens of loader worker processes and
#: gigabytes of pinned host memory takes seconds (the data-path analyzer on a 16-core H200 box: over
#: 2 s), and a kill then is the tool's artefact, not the benchmark's.
EXIT_GRACE_S = 15.0
#: After the child exits, how long its pipes may stay open (held by a grandchild) before the
#: group is killed.
EXIT_DRAIN_S = 1.0
#: Folder (in the user data folder, else the temp folder) for documents the results folder refused.
UNSAVED_DIR_NAME = "unsaved-results"
#: Interval of the sampler the runner starts itself when none is handed in.
SAMPLER_INTERVAL_S = 0.5

_STDOUT_LINE_LIMIT = 64 << 20  # a result line with long series can be large; stdout is protocol-only
_STDERR_LINE_LIMIT = 64 << 10

EventCallback = Callable[[dict[str, Any]], None]


@dataclass
class RunResult:
    """What :func:`run_benchmark` returns.

    ``document`` is the result document (also when the run failed or was cancelled); ``path`` is
    where it was written (``None`` with ``save=False`` or when writing failed, then
    ``save_error`` says why, and where the document was kept instead: ``fallback_path``).
    """

    document: dict[str, Any]
    path: Path | None
    status: str
    save_error: str | None = None
    #: Where the document was kept instead when the results folder could not be written.
    fallback_path: Path | None = None

    @property
    def reason(self) -> str | None:
        return self.document.get("reason")


def run_benchmark(
    bench_id: str,
    params: dict[str, Any] | None = None,
    *,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
    results_dir: str | os.PathLike | None = None,
    sampler: Any = None,
    save: bool = True,
    check_availability: bool = True,
) -> RunResult:
    """Run benchmark ``bench_id`` in a child process and return its document.

    Raises ``KeyError`` for an unknown id and ``ParamError`` for bad ``params`` before anything
    starts. Everything after that ends in a document: status "ok", "failed" (crash, error,
    timeout, unavailable) or "cancelled" (``cancel`` was set). ``on_event`` gets every protocol
    event (see :mod:`~hwbench_gui.engine.run.protocol`) on the calling thread. ``timeout_s``
    defaults to the benchmark's ``default_timeout_s``. ``sampler`` is a running telemetry
    sampler to use; without one the runner samples with its own for the run. With
    ``check_availability`` a benchmark the registry says cannot run here is not started: its
    document is failed with the reason. If the calling thread gets KeyboardInterrupt, the run
    is cancelled and its document written before the interrupt is raised again; any other
    exception from ``on_event`` ends the child's group and propagates (no document).
    """
    bench = registry.get(bench_id)
    resolved = bench.resolve_params(params)
    limit_s = float(bench.default_timeout_s if timeout_s is None else timeout_s)
    emit = on_event or (lambda event: None)
    started_at = result_document.now_utc()

    if check_availability:
        unavailable = registry.availability(bench)
        if unavailable:
            doc = result_document.build_document(
                bench, resolved, status="failed", reason=f"not available here: {unavailable}",
                error_kind="unavailable", started_at=started_at, duration_s=0.0, timeout_s=limit_s,
                telemetry_reason="the benchmark did not start")
            emit({"type": "finished", "status": "failed", "reason": doc["reason"]})
            return _finish(doc, save, results_dir)

    run = _Run(bench, resolved, limit_s, emit, cancel)
    interrupted = False
    try:
        run.execute(sampler)
    except KeyboardInterrupt:
        interrupted = True
        run.stop_reason = run.stop_reason or "cancelled"
    except BaseException:  # e.g. on_event raised: the child must not outlive the run
        run.stop_reason = run.stop_reason or "aborted"
        run.cleanup()
        raise
    run.cleanup()
    doc = run.build_document(started_at)
    normal.annotate(doc)
    emit({"type": "finished", "status": doc["status"], "reason": doc["reason"]})
    result = _finish(doc, save, results_dir)
    if interrupted:
        raise KeyboardInterrupt
    return result


def _finish(doc: dict[str, Any], save: bool, results_dir: str | os.PathLike | None) -> RunResult:
    path = fallback = None
    save_error = None
    if save:
        try:
            path = store.write_result(doc, results_dir)
        except Exception as exc:  # noqa: BLE001 - whatever stops the save, the finished run is kept elsewhere
            folder = store.results_dir(results_dir)
            save_error = f"could not write the result to {folder}: {_save_reason(exc)}"
            fallback, kept = _keep_elsewhere(doc, folder)
            save_error += f"; it was kept in {fallback}" if fallback else f"; {kept}"
    return RunResult(document=doc, path=path, status=doc["status"], save_error=save_error, fallback_path=fallback)


def _keep_elsewhere(doc: dict[str, Any], failed: Path) -> tuple[Path | None, str]:
    """Write ``doc`` into the first writable of the unsaved-results folders (never ``failed``)."""
    import tempfile

    from hwbench_gui.engine import paths

    reasons = []
    candidates = (paths.user_data_dir() / UNSAVED_DIR_NAME, Path(tempfile.gettempdir()) / f"hwbench-{UNSAVED_DIR_NAME}")
    for folder in candidates:
        if folder == failed:
            continue
        try:
            return store.write_result(doc, folder), ""
        except Exception as exc:  # noqa: BLE001 - the next folder may take it
            reasons.append(f"{folder}: {_save_reason(exc)}")
    return None, "it could not be kept elsewhere either (" + "; ".join(reasons) + "); it exists only in memory"


def _save_reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return str(exc.strerror or exc)
    return f"{type(exc).__name__}: {exc}"


@dataclass
class _Run:
    """The state of one child process run (used by :func:`run_benchmark` only)."""

    bench: Benchmark
    params: dict[str, Any]
    limit_s: float
    emit: EventCallback
    cancel: threading.Event | None
    proc: subprocess.Popen | None = None
    stop_reason: str | None = None  # "cancelled" | "timeout" | "aborted" (the caller's code raised)
    outcome: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    log_tail: collections.deque = field(default_factory=lambda: collections.deque(maxlen=LOG_TAIL_LINES))
    warnings: list[str] = field(default_factory=list)
    t_start: float = 0.0
    t_end: float | None = None
    wall_start: float = 0.0
    wall_end: float = 0.0
    telemetry: "_Telemetry | None" = None
    telemetry_result: tuple[dict[str, Any] | None, str | None] = (None, "the benchmark did not start")
    telemetry_whole_run: dict[str, Any] | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)
    #: the child's last progress event: a timeout's reason says what the run was doing when it was stopped
    last_progress: dict[str, Any] | None = None
    _queue: queue.Queue = field(default_factory=queue.Queue)
    _readers: list[threading.Thread] = field(default_factory=list)
    _open_streams: int = 0

    def execute(self, sampler: Any) -> None:
        self.telemetry = _Telemetry(sampler)
        command = worker_command({"id": self.bench.id, "params": self.params})
        kwargs: dict[str, Any] = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        self.wall_start = time.time()
        self.t_start = time.monotonic()
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=child_env(self.limit_s), **kwargs)
        except OSError as exc:
            self.error = {"type": "error", "kind": "crash",
                          "message": f"could not start the worker {command[0]!r}: {exc}"}
            return
        self.telemetry.watch(self.proc.pid)
        for name, stream, limit in (("stdout", self.proc.stdout, _STDOUT_LINE_LIMIT),
                                    ("stderr", self.proc.stderr, _STDERR_LINE_LIMIT)):
            reader = threading.Thread(target=_read_lines, args=(stream, name, limit, self._queue),
                                      name=f"hwbench-{self.bench.id}-{name}", daemon=True)
            reader.start()
            self._readers.append(reader)
        self._open_streams = 2
        self.emit({"type": "started", "pid": self.proc.pid, "benchmark": self.bench.id, "params": self.params,
                   "timeout_s": self.limit_s})
        self._watch()

    def _watch(self) -> None:
        deadline = self.t_start + self.limit_s
        exited_at = None
        while True:
            try:
                self._handle(*self._queue.get(timeout=POLL_S))
                # Drain what is there, but a child that floods its output must not keep the loop
                # from seeing cancel and the deadline.
                drain_until = time.monotonic() + POLL_S / 2
                while time.monotonic() < drain_until:
                    self._handle(*self._queue.get_nowait())
            except queue.Empty:
                pass
            if self.cancel is not None and self.cancel.is_set():
                self.stop_reason = "cancelled"
                return
            now = time.monotonic()
            if now >= deadline:
                self.stop_reason = "timeout"
                return
            if self._open_streams == 0:
                return
            if _has_exited(self.proc):
                exited_at = exited_at or now
                if now - exited_at >= EXIT_DRAIN_S:  # a grandchild holds the pipes open
                    return

    def _handle(self, stream: str, line: str | None) -> None:
        if line is None:
            self._open_streams -= 1
            return
        event = protocol.parse_line(line) if stream == "stdout" else None
        if event is None:
            if line.strip():
                self.log_tail.append(line if stream == "stderr" else f"[stdout] {line}")
                self.emit({"type": "log", "message": line, "stream": stream})
            return
        kind = event["type"]
        if kind == "log":
            self.log_tail.append(str(event.get("message", "")))
        elif kind == "result":
            if isinstance(event.get("outcome"), dict):
                self.outcome = event["outcome"]
            else:
                self.log_tail.append(f"[runner] malformed result event: {line[:200]}")
        elif kind == "progress":
            self.last_progress = event
        elif kind == "phase":
            self.phases.append({**event, "t": event.get("t") if isinstance(event.get("t"), (int, float))
                                else time.time()})
        elif kind == "error":
            self.error = event
            self.log_tail.append(f"error ({event.get('kind', 'exception')}): {event.get('message', '')}")
            self.log_tail.extend(str(t) for t in event.get("traceback") or [])
        self.emit(event)

    def cleanup(self) -> None:
        """End the child's whole process group, reap the child, stop the readers and the sampler."""
        if self.proc is not None:
            if self.stop_reason is not None:
                _terminate_group(self.proc)
            elif not _wait_exit(self.proc, EXIT_GRACE_S):
                self.warnings.append("the worker closed its output but did not exit; it was killed")
                _terminate_group(self.proc)
            # Whatever the child left behind in its group goes too; the unreaped child keeps the
            # group id from being reused until this is done.
            _kill_group(self.proc, final=True)
            self.proc.wait()
            self.t_end = time.monotonic()
            self.wall_end = time.time()
            for reader in self._readers:
                reader.join(timeout=1.0)
            if any(reader.is_alive() for reader in self._readers):
                # Closing the pipe here would block on the reader's lock; the daemon reader closes
                # it when the last writer is gone.
                self.warnings.append("a process outside the benchmark's process group still holds its output")
            try:
                while True:
                    self._handle(*self._queue.get_nowait())
            except queue.Empty:
                pass
        if self.telemetry is not None:
            if self.proc is not None:
                whole, reason = self.telemetry.summary(self.wall_start, self.wall_end)
                self.telemetry_whole_run = whole
                windows = timed_windows(self.phases, self.wall_end)
                self.telemetry_result = (self.telemetry.summary(self.wall_start, self.wall_end, windows)
                                         if windows else (whole, reason))
                busy = busy_warning(self.telemetry_result[0])
                if busy:
                    self.warnings.append(busy)
                elif self.bench.telemetry_notes is not None and self.outcome is not None and self.telemetry_result[0]:
                    self.warnings.extend(self.bench.telemetry_notes(self.params, self.outcome,
                                                                    self.telemetry_result[0]))
            self.telemetry.close()

    def build_document(self, started_at) -> dict[str, Any]:
        rc = self.proc.returncode if self.proc is not None else None
        signal_name = _signal_name(-rc) if rc is not None and rc < 0 else None
        status, reason, kind = self._verdict(rc)
        summary, telemetry_reason = self.telemetry_result
        duration_s = None if self.t_end is None else round(self.t_end - self.t_start, 6)
        return result_document.build_document(
            self.bench, self.params, status=status, outcome=self.outcome if status == "ok" else None,
            reason=reason, error_kind=kind, started_at=started_at, duration_s=duration_s, exit_code=rc,
            exit_signal=signal_name, log_tail=list(self.log_tail), telemetry=summary,
            telemetry_reason=telemetry_reason, telemetry_whole_run=self.telemetry_whole_run,
            warnings=self.warnings, timeout_s=self.limit_s)

    def _verdict(self, rc: int | None) -> tuple[str, str | None, str | None]:
        if self.outcome is not None:
            if rc not in (0, None):
                self.warnings.append(f"the worker {describe_exit(rc)} after reporting its result")
            return "ok", None, None
        if self.stop_reason == "cancelled":
            return "cancelled", "cancelled by the user", "cancelled"
        if self.stop_reason == "timeout":
            return ("failed", f"timed out after {self.limit_s:g} s{self._while()}; the benchmark's processes were "
                    "killed", "timeout")
        if self.error is not None:
            return "failed", str(self.error.get("message") or "the benchmark failed"), \
                str(self.error.get("kind") or "exception")
        what = describe_exit(rc) if rc not in (0, None) else "exited without a result"
        reason = f"the worker {what}"
        if rc is None or rc >= 0:  # after a signal the log ends in faulthandler's frames: see log_tail
            last = next((line for line in reversed(self.log_tail) if line.strip()), None)
            reason += f"; last log line: {last.strip()}" if last else ""
        return "failed", reason, "crash"


    def _while(self) -> str:
        """" while <the child's last progress message> (<fraction> done)", or "" before any progress."""
        event = self.last_progress or {}
        message = str(event.get("message") or "").strip()
        if not message:
            return ""
        fraction = event.get("fraction")
        done = f" ({fraction:.0%} done)" if isinstance(fraction, (int, float)) and 0 <= fraction <= 1 else ""
        return f" while {message}{done}"


def describe_exit(returncode: int) -> str:
    """"killed by SIGSEGV (Segmentation fault)" or "exited with status 3"."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    name = _signal_name(-returncode)
    text = f"was killed by {name}"
    try:
        description = signal.strsignal(-returncode)
    except (ValueError, AttributeError):
        description = None
    if description:
        text += f" ({description})"
    if -returncode == getattr(signal, "SIGKILL", -1):
        text += "; without a cancel or timeout this is usually the kernel's out-of-memory killer"
    return text


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _read_lines(stream: IO[bytes], name: str, limit: int, out: queue.Queue) -> None:
    try:
        while True:
            raw = stream.readline(limit)
            if not raw:
                break
            out.put((name, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass
        out.put((name, None))


def _has_exited(proc: subprocess.Popen) -> bool:
    """Whether the child has exited, without reaping it where the OS allows (so its pid, which is
    also its process group id, stays reserved until the group has been killed)."""
    if proc.returncode is not None:
        return True
    if hasattr(os, "waitid") and os.name == "posix":
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _wait_exit(proc: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not _has_exited(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _terminate_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the child's group (CTRL_BREAK on Windows), SIGKILL after :data:`TERM_GRACE_S`.

    Descendants that left the group (``setsid``) are found through psutil while the child still
    lives, and killed too.
    """
    strays = _descendants(proc.pid)
    if os.name == "posix":
        _signal_group(proc, signal.SIGTERM)
    else:
        try:
            proc.send_signal(signal.CTRL_BREAK_EVENT)
        except OSError:
            pass
    if not _wait_exit(proc, TERM_GRACE_S):
        _kill_group(proc, final=False)
        _wait_exit(proc, TERM_GRACE_S)
    for stray in strays:
        try:
            stray.kill()
        except Exception:  # already gone (psutil.NoSuchProcess) or not ours to kill
            pass


def _descendants(pid: int) -> list:
    try:
        import psutil

        return psutil.Process(pid).children(recursive=True)
    except Exception:  # psutil missing, or the child has already gone
        return []


def _kill_group(proc: subprocess.Popen, *, final: bool) -> None:
    if os.name == "posix":
        _signal_group(proc, signal.SIGKILL)
        return
    # Windows has no process groups to signal: kill the tree psutil can still see.
    try:
        import psutil

        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                pass
    except Exception:  # psutil missing or the child already gone
        pass
    if not final or proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass


def timed_windows(phases: list[dict[str, Any]], run_end: float) -> list[tuple[float, float]]:
    """``(start, end)`` wall times of the ``timed`` phases a child marked; a window left open (the
    child died in it) ends with the run."""
    windows, opened = [], None
    for event in phases:
        if event.get("phase") != "timed":
            continue
        if event.get("state") == "start":
            opened = float(event["t"])
        elif event.get("state") == "end" and opened is not None:
            windows.append((opened, float(event["t"])))
            opened = None
    if opened is not None:
        windows.append((opened, run_end))
    return windows


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left in the group


class _Telemetry:
    """The sampler side of a run: someone else's sampler, or one started for this run only."""

    def __init__(self, sampler: Any):
        self.sampler = sampler
        self.own = False
        self.reason: str | None = None
        try:
            if self.sampler is None:
                from hwbench_gui.engine.telemetry import Sampler

                self.sampler = Sampler(interval_s=SAMPLER_INTERVAL_S)
                self.own = True
            if not getattr(self.sampler, "running", True):
                self.sampler.start()
                self.own = True
        except ImportError as exc:
            self.sampler = None
            self.reason = f"telemetry module unavailable: {exc}"
        except Exception as exc:
            self.sampler = None
            self.reason = f"telemetry sampler could not start: {type(exc).__name__}: {exc}"

    def watch(self, pid: int | None) -> None:
        if self.sampler is None:
            return
        try:
            self.sampler.watch(pid)
        except Exception as exc:
            self.reason = f"telemetry sampler could not watch the child: {type(exc).__name__}: {exc}"

    def close(self) -> None:
        if self.sampler is None:
            return
        self.watch(None)
        if self.own:
            try:
                self.sampler.stop()
            except Exception:
                pass

    def summary(self, since: float, until: float, windows: list[tuple[float, float]] | None = None
                ) -> tuple[dict[str, Any] | None, str | None]:
        if self.sampler is None:
            return None, self.reason
        try:
            summary = (self.sampler.summary_for_result(since, until, windows) if windows is not None
                       else self.sampler.summary_for_result(since, until))
        except Exception as exc:
            return None, f"telemetry summary failed: {type(exc).__name__}: {exc}"
        if not summary:
            return None, self.reason or "the sampler returned no summary"
        if summary.get("samples") == 0:
            return summary, "the sampler took no samples during the run (shorter than its interval?)"
        return summary, None
