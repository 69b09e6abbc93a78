"""Fixture benchmarks for the runner tests: each ends in a different way (see the package doc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from hwbench_gui.engine.foreign import ForeignFileError
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, Series


def _ok(params, reporter):
    samples = [v * params["scale"] for v in params["samples"]]
    for i, value in enumerate(samples):
        reporter.progress((i + 1) / len(samples), f"repeat {i + 1}")
        reporter.metric("value", value, "units", repeat=i)
    reporter.log("all repeats done")
    print("a stray print from the benchmark")  # must land in the log, not break the protocol
    return Outcome(
        figure_name="value",
        unit="units",
        samples=samples,
        precision="FP32",
        method="Returns the given samples times scale.",
        figures={"double": {"unit": "units", "higher_is_better": False, "samples": [2 * s for s in samples]},
                 "unmeasured": {"value": float("nan"), "unit": "units"}},
        series=[Series(label="s", x=[1, 2], y=[3.0, float("nan")], x_label="x", y_label="y")],
        warnings=["fixture warning"],
        details={"count": len(samples)},
        device="cpu (fixture)",
    )


def _slow_exit(params, reporter):
    """Reports its result, then takes ``exit_s`` to end with its output closed: as the kernel does
    when it closes a process's files first and then frees gigabytes of pinned memory."""
    import threading

    def teardown():
        time.sleep(0.5)  # the result is written and the protocol stream closed
        os.close(1)
        os.close(2)
        time.sleep(params["exit_s"])

    threading.Thread(target=teardown, daemon=False).start()
    return _ok({"samples": [1, 2, 3], "scale": 1.0}, reporter)


def _segfault(params, reporter):
    reporter.log("about to segfault")
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(10)


def _sigkill(params, reporter):
    reporter.log("about to be SIGKILLed")
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(10)


def _hang(params, reporter):
    # Ignores SIGTERM so that only the runner's SIGKILL escalation can end it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    reporter.metric("pid", os.getpid(), "")
    reporter.progress(0.25, "waiting for nothing")
    while True:
        time.sleep(0.05)


def _slow(params, reporter):
    grandchild = subprocess.Popen(["sleep", "60"])
    reporter.metric("grandchild_pid", grandchild.pid, "")
    for i in range(600):
        reporter.progress(i / 600, "sleeping")
        time.sleep(0.05)
    return Outcome(figure_name="never", unit="s", samples=[1.0])


def _raises(params, reporter):
    reporter.log("about to raise")
    raise RuntimeError("boom from the fixture")


def _garbage(params, reporter):
    print("plain text on stdout")
    print('{"type": "result", "outcome": "a fake result printed by a library"}')
    sys.stdout.flush()
    os.write(1, b"raw bytes on fd 1 \xff\xfe not utf-8\n")
    os.write(1, b'{"half a json line')
    os.write(1, b"\n")
    sys.stderr.write("a line on stderr\n")
    return Outcome(figure_name="value", unit="units", samples=[1.0, 2.0, 3.0])


def _oom(params, reporter):
    raise MemoryError("fixture could not allocate 1 TiB")


class OutOfMemoryError(RuntimeError):
    """Named like torch.cuda.OutOfMemoryError: the worker recognises it by name."""


def _cuda_oom(params, reporter):
    raise OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")


def _unavailable(params, reporter):
    raise BenchmarkUnavailable("the fixture decided it cannot run here")


def _refuses(params, reporter):
    if params["what"] == "file":
        raise ForeignFileError(params["path"], "not a regular file (a pipe, device or socket): not read as a test")
    raise ParamError(f"path: {params['path']} is not a folder")


def _exit_without_result(params, reporter):
    os._exit(0)


def _timed(params, reporter):
    """A warm-up of ``warmup_s``, then ``repeats`` timed windows of ``window_s`` each (idle), each marked."""
    reporter.phase("warmup", "start")
    time.sleep(params["warmup_s"])
    reporter.phase("warmup", "end")
    samples = []
    for r in range(params["repeats"]):
        reporter.phase("timed", "start", r)
        time.sleep(params["window_s"])
        reporter.phase("timed", "end", r)
        samples.append(1.0 + r)
    return Outcome(figure_name="value", unit="units", samples=samples)


def _no_samples(params, reporter):
    return Outcome(figure_name="value", unit="units", samples=[float("nan")])


def _params_echo(params, reporter):
    return Outcome(figure_name="value", unit="units", samples=[1.0], details={"params": params})


def _flood(params, reporter):
    reporter.metric("pid", os.getpid(), "")
    i = 0
    while True:
        sys.stderr.write(f"flood line {i}\n")
        i += 1


def _b(id_, run, title, params=(), **kw):
    return Benchmark(id=id_, title=title, category="test", description=title, params=list(params), run=run, **kw)


BENCHMARKS = [
    _b("test.ok", _ok, "completes with known samples", [
        Param("samples", "int_list", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "the samples to return"),
        Param("scale", "float", 1.0, "multiplies every sample", minimum=0.0, maximum=100.0),
    ]),
    _b("test.noted", _ok, "completes; its declaration adds a note from the run's telemetry", [
        Param("samples", "int_list", [1, 2, 3], "the samples to return"),
        Param("scale", "float", 1.0, "multiplies every sample", minimum=0.0, maximum=100.0)],
       telemetry_notes=lambda params, outcome, telemetry: [
           f"note: {outcome['device']}, {'telemetry' if 'interval_s' in telemetry else 'none'}"]),
    _b("test.slow_exit", _slow_exit, "takes exit_s to end after its result", [
        Param("exit_s", "float", 3.0, "seconds from the result to the end", minimum=0.0, maximum=60.0)]),
    _b("test.segfault", _segfault, "segfaults"),
    _b("test.sigkill", _sigkill, "is SIGKILLed"),
    _b("test.hang", _hang, "hangs past its timeout, ignoring SIGTERM", default_timeout_s=1.5),
    _b("test.slow", _slow, "sleeps 30 s with a grandchild 'sleep 60'"),
    _b("test.raises", _raises, "raises RuntimeError"),
    _b("test.flood", _flood, "writes stderr lines as fast as it can, forever"),
    _b("test.garbage", _garbage, "prints garbage on stdout"),
    _b("test.oom", _oom, "raises MemoryError"),
    _b("test.cuda_oom", _cuda_oom, "raises an OutOfMemoryError"),
    _b("test.unavailable", _unavailable, "raises BenchmarkUnavailable"),
    _b("test.refuses", _refuses, "refuses its parameter or its file at run time", [
        Param("what", "choice", "param", "what is refused", choices=("param", "file")),
        Param("path", "path", "/nowhere", "the path named in the refusal")]),
    _b("test.no_result", _exit_without_result, "exits 0 without a result"),
    _b("test.no_samples", _no_samples, "returns only a NaN sample"),
    _b("test.timed", _timed, "marks a warm-up and timed windows", [
        Param("repeats", "int", 3, "timed windows", minimum=1, maximum=20),
        Param("window_s", "float", 1.0, "seconds per window", minimum=0.1, maximum=10.0),
        Param("warmup_s", "float", 0.3, "seconds of warm-up before the first window", minimum=0.0, maximum=10.0),
    ]),
    _b("test.params", _params_echo, "echoes its parameters", [
        Param("mode", "choice", "a", "a choice", choices=("a", "b")),
        Param("path", "path", None, "a path without a default"),
        Param("sizes", "int_list", (1, 2), "a list default given as a tuple"),
    ]),
    _b("test.needs_gpu", _params_echo, "needs a GPU", needs=frozenset({"cuda"})),
    _b("test.needs_two_gpus", _params_echo, "needs two GPUs", needs=frozenset({"multi_gpu"})),
    _b("test.self_unavailable", _params_echo, "says it is unavailable",
       availability=lambda: "fixture availability says no"),
    _b("test.needs_unknown", _params_echo, "needs something unknown", needs=frozenset({"quantum"})),
]
