"""The benchmark child: runs one benchmark and speaks the JSON-lines protocol on its stdout.

Started by the runner as ``python -m hwbench_gui --hwbench-worker SPEC`` (or, frozen,
``hwbench-gui --hwbench-worker SPEC``), where SPEC is ``{"id": ..., "params": {...}}`` as JSON,
or ``-`` to read it from stdin. Exit status: 0 with a result line, 1 after an error line,
2 when the spec itself is unusable.

Only protocol lines reach the real stdout: file descriptor 1 is pointed at stderr for the run, so
prints from Python code and writes from C libraries land in the run's log instead of corrupting
the protocol.
"""

from __future__ import annotations

import atexit
import faulthandler
import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import IO, Any

from hwbench_gui.engine import lifeline
from hwbench_gui.engine.foreign import ForeignFileError
from hwbench_gui.engine.run import protocol
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, ParamError

#: Exception class names that mean the accelerator ran out of memory (matched by name so that
#: neither torch nor TensorFlow has to be imported to recognise them).
_OOM_CLASS_NAMES = {"OutOfMemoryError", "ResourceExhaustedError"}

_TRACEBACK_LINES = 12


class JsonLineReporter:
    """A :class:`~hwbench_gui.engine.spec.benchmark.Reporter` writing protocol lines to ``stream``.

    Thread-safe (a benchmark may report from its own threads); every line is flushed at once.
    """

    def __init__(self, stream: IO[str]):
        self._stream = stream
        self._lock = threading.Lock()

    def emit(self, event: dict[str, Any]) -> None:
        line = protocol.encode(event) + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()

    def progress(self, fraction: float, message: str = "") -> None:
        try:
            fraction = min(1.0, max(0.0, float(fraction)))
        except (TypeError, ValueError):
            fraction = None
        self.emit({"type": "progress", "fraction": fraction, "message": str(message)})

    def log(self, message: str) -> None:
        self.emit({"type": "log", "message": str(message)})

    def metric(self, name: str, value: float, unit: str, **extra: Any) -> None:
        self.emit({**extra, "type": "metric", "name": name, "value": value, "unit": unit})

    def phase(self, phase: str, state: str, repeat: int | None = None) -> None:
        self.emit({"type": "phase", "phase": str(phase), "state": str(state), "repeat": repeat, "t": time.time()})


def main(argv: list[str]) -> int:
    """Run the benchmark named in the spec; returns the exit status."""
    if lifeline.die_with_parent(lifeline.parent_from_env()) != "none":  # a killed CLI or GUI takes this run along
        lifeline.guard_group()  # and what the benchmark started itself
    os.environ[lifeline.PARENT_ENV] = str(os.getpid())  # ranks this worker launches die with it
    previous_sigterm = _stop_on_sigterm()
    terminated = False
    protocol_fd = os.dup(1)
    saved_stdout_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)  # C-level writes to fd 1 now go to stderr
    sys.stdout = sys.stderr
    stream = os.fdopen(protocol_fd, "w", encoding="utf-8", errors="replace", newline="\n")
    reporter = JsonLineReporter(stream)
    try:
        # A segfault in native code then leaves a Python traceback in the run's log.
        if not faulthandler.is_enabled():
            faulthandler.enable(file=sys.__stderr__ or sys.stderr)
        return _run(argv, reporter)
    except Terminated:
        terminated = True
    finally:
        stream.close()
        os.dup2(saved_stdout_fd, 1)
        os.close(saved_stdout_fd)
        sys.stdout = saved_stdout
        if previous_sigterm is not None and not terminated:  # main() run in-process (tests)
            signal.signal(signal.SIGTERM, previous_sigterm)
    if terminated:  # unwound cleanly; now end as SIGTERM would have, so the runner sees the signal
        atexit._run_exitfuncs()  # multiprocessing's exit hook releases the pools' semaphores
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    return 1


class Terminated(BaseException):
    """SIGTERM reached the worker (the runner's cancel or timeout): the run unwinds, so pools and
    their semaphores are shut down cleanly instead of leaking with tracebacks in the log."""


def _stop_on_sigterm():
    """SIGTERM raises :class:`Terminated` in the main thread; returns the handler it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        raise Terminated("stopped by SIGTERM")

    return signal.signal(signal.SIGTERM, on_sigterm)


def _run(argv: list[str], reporter: JsonLineReporter) -> int:
    try:
        spec = _read_spec(argv)
    except ValueError as exc:
        reporter.emit({"type": "error", "kind": "bad_spec", "message": str(exc)})
        return 2

    from hwbench_gui.engine.run import registry

    try:
        bench = registry.get(spec["id"])
    except KeyError as exc:
        errors = registry.module_errors()
        message = exc.args[0] if exc.args else str(exc)
        if errors:
            message += "; modules that failed to load: " + "; ".join(errors.values())
        reporter.emit({"type": "error", "kind": "unknown_benchmark", "message": message})
        return 1
    try:
        params = child_params(bench, spec.get("params") or {})
    except ParamError as exc:
        reporter.emit({"type": "error", "kind": "bad_params", "message": str(exc)})
        return 1

    try:
        outcome = bench.run(params, reporter)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"{bench.id}.run returned {type(outcome).__name__}, not an Outcome")
        event = {"type": "result", "outcome": protocol.outcome_to_json(outcome)}
    except (BenchmarkUnavailable, ParamError, ForeignFileError) as exc:
        reporter.emit(refusal_event(exc))
        return 1
    except BaseException as exc:  # noqa: BLE001 - everything becomes an error event; SystemExit too
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            raise
        reporter.emit(error_event(exc))
        return 1
    reporter.emit(event)
    return 0


def _read_spec(argv: list[str]) -> dict[str, Any]:
    if not argv:
        raise ValueError("no run spec given (expected a JSON object or '-' for stdin)")
    text = sys.stdin.read() if argv[0] == "-" else argv[0]
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"run spec is not valid JSON: {exc}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
        raise ValueError('run spec must be a JSON object with a string "id"')
    if not isinstance(spec.get("params", {}), dict):
        raise ValueError('run spec "params" must be a JSON object')
    return spec


def child_params(bench: Benchmark, given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value from what the parent sent: resolved values as JSON numbers, lists and
    strings, which :meth:`Param.parse` checks without reading them as text again.

    A value equal to the declared default is taken as is (defaults such as ``None`` need not parse).
    """
    given = dict(given)
    values = {}
    for p in bench.params:
        if p.name not in given:
            values[p.name] = p.default
            continue
        raw = given.pop(p.name)
        default = list(p.default) if isinstance(p.default, tuple) else p.default
        values[p.name] = raw if raw == default else p.parse(raw)
    if given:
        raise ParamError(f"{bench.id} has no parameter {', '.join(sorted(given))}")
    return values


def refusal_event(exc: BenchmarkUnavailable | ParamError | ForeignFileError) -> dict[str, Any]:
    """The error event of an expected refusal: its kind and its one line, no traceback (the reason is the
    whole story: a bad parameter, a bad file, does not fit, cannot run here)."""
    kind = ("unavailable" if isinstance(exc, BenchmarkUnavailable) else "bad_file"
            if isinstance(exc, ForeignFileError) else "bad_params")
    message = " ".join(str(exc).split()) or ("not available here" if kind == "unavailable" else type(exc).__name__)
    return {"type": "error", "kind": kind, "message": message}


def error_event(exc: BaseException) -> dict[str, Any]:
    """The error event for an exception a benchmark raised (traceback tail in ``traceback``)."""
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip().splitlines()
    tail = tail[-_TRACEBACK_LINES:]
    names = {cls.__name__ for cls in type(exc).__mro__}
    summary = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, MemoryError) or names & _OOM_CLASS_NAMES:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if detail.startswith("CUDA out of memory at"):  # a benchmark's own message, already with its advice
            return {"type": "error", "kind": "out_of_memory", "traceback": tail, "message": detail}
        # a benchmark's own refusal (its estimate before allocating) already says what to try
        advice = "" if ": try " in detail else " (try smaller sizes or batch)"
        return {"type": "error", "kind": "out_of_memory", "traceback": tail,
                "message": f"{detail if detail.startswith('out of memory') else 'out of memory: ' + detail}{advice}"}
    return {"type": "error", "kind": "exception", "message": summary, "traceback": tail}
