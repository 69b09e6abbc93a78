"""The benchmark runner, worker and registry, with fixture benchmarks that crash in every way.

Each run starts a real child process; afterwards no child or grandchild may be left running.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time

import psutil
import pytest

from support import FIXTURE_BENCHMARKS
from hwbench_gui.engine import child
from hwbench_gui.engine.results import store
from hwbench_gui.engine.run import protocol, registry, runner, worker
from hwbench_gui.engine.spec.benchmark import ParamError


pytestmark = pytest.mark.skipif(os.name != "posix", reason="fixtures use POSIX signals")


pytestmark = [pytestmark, pytest.mark.usefixtures("fixture_benchmarks")]


class Recorder:
    """Collects every event; remembers the pids the run reports."""

    def __init__(self):
        self.events: list[dict] = []
        self.pids: list[int] = []
        self.grandchild = threading.Event()

    def __call__(self, event):
        self.events.append(event)
        if event["type"] == "started":
            self.pids.append(event["pid"])
        if event["type"] == "metric" and event["name"] in ("grandchild_pid", "pid"):
            self.pids.append(int(event["value"]))
            self.grandchild.set()

    def of_type(self, kind):
        return [e for e in self.events if e["type"] == kind]


class HeldClock:
    """The runner's ``time`` while a test waits for its child: ``monotonic`` stands still until
    :meth:`release` (the child reported what the test needs), then runs on from there. A timeout then
    fires a fixed span after the child was ready however long a loaded machine took to start it, instead
    of racing the child's start-up. Past ``ceiling_s`` of real time it runs anyway: a child that never
    gets ready fails the test instead of hanging it."""

    def __init__(self, ceiling_s: float = 120.0):
        self._real = time.monotonic
        self._began = self._real()
        self._ceiling_s = ceiling_s
        self._released_at: float | None = None
        self.sleep, self.time = time.sleep, time.time

    def release(self) -> None:
        if self._released_at is None:
            self._released_at = self._real()

    def monotonic(self) -> float:
        real = self._real()
        if self._released_at is None and real - self._began >= self._ceiling_s:
            self.release()
        return self._began + (real - self._released_at if self._released_at is not None else 0.0)


def _timeout_run(monkeypatch, bench_id, tmp_path, ready, **kwargs):
    """Run ``bench_id`` with its timeout counted from the event ``ready(event)`` says the test needs."""
    clock = HeldClock()
    monkeypatch.setattr(runner, "time", clock)
    recorder = Recorder()

    def on_event(event):
        recorder(event)
        if ready(event):
            clock.release()

    result = runner.run_benchmark(bench_id, on_event=on_event, results_dir=tmp_path, **kwargs)
    monkeypatch.setattr(runner, "time", time)  # the next run (assert_next_run_works) on the real clock
    return result, recorder


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def assert_all_gone(pids):
    """Every pid has ended (a zombie waiting for init to reap it counts as ended)."""
    assert pids, "the run reported no pids to check"
    # a ceiling (below the fixtures' 60 s sleeps): the loop ends as soon as they have gone
    deadline = time.monotonic() + 30.0
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if _alive(pid)]
    assert not left, f"processes left running: {left}"


def run(bench_id, tmp_path, **kwargs):
    recorder = kwargs.pop("on_event", None) or Recorder()
    result = runner.run_benchmark(bench_id, on_event=recorder, results_dir=tmp_path, **kwargs)
    return result, recorder


def assert_next_run_works(tmp_path):
    result, recorder = run("test.ok", tmp_path / "next", params={"samples": [4, 5, 6]})
    assert result.status == "ok", result.document["reason"]
    assert result.document["figure"]["value"] == 5.0
    assert_all_gone(recorder.pids)


# -- a run that works ------------------------------------------------------------------------------

def test_ok_run_writes_document_with_stats(tmp_path):
    result, recorder = run("test.ok", tmp_path)
    doc = result.document

    assert result.status == "ok" and doc["status"] == "ok"
    assert doc["reason"] is None and doc["error_kind"] is None and doc["log_tail"] is None
    assert doc["exit_code"] == 0 and doc["exit_signal"] is None
    assert doc["benchmark"] == {"id": "test.ok", "title": "completes with known samples", "category": "test",
                                "version": "1", "comparability_params": ["samples", "scale"]}
    assert doc["params"] == {"samples": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "scale": 1.0}
    assert doc["figure"] == {"name": "value", "value": 5.5, "unit": "units", "higher_is_better": True}
    assert doc["samples"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    stats = doc["stats"]
    assert stats["median"] == 5.5 and stats["n"] == 10 and stats["min"] == 1 and stats["max"] == 10
    assert stats["p5"] == pytest.approx(1.45) and stats["p95"] == pytest.approx(9.55)
    assert doc["precision"] == "FP32" and doc["device"] == "cpu (fixture)"
    assert doc["figures"]["double"]["value"] == 11.0
    assert doc["figures"]["double"]["higher_is_better"] is False
    assert doc["figures"]["unmeasured"]["value"] is None and doc["figures"]["unmeasured"]["reason"]
    assert doc["series"][0]["y"] == [3.0, None]  # NaN is stored as null
    assert "fixture warning" in doc["warnings"]
    assert doc["details"] == {"count": 10}
    assert doc["timeout_s"] == 600.0 and doc["duration_s"] > 0
    json.dumps(doc, allow_nan=False)

    # The file is the document, written atomically (no temporary file left behind).
    assert result.path is not None and result.path.parent == tmp_path
    assert result.path.name.endswith(f"_test.ok_{doc['id'][:8]}.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == [result.path.name]
    loaded = store.load_result(result.path)
    assert {k: v for k, v in loaded.items() if k != "_path"} == doc

    kinds = [e["type"] for e in recorder.events]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    assert kinds.count("progress") == 10 and kinds.count("metric") == 10 and kinds.count("result") == 1
    assert recorder.of_type("progress")[-1]["fraction"] == 1.0
    logs = [(e["message"], e.get("stream")) for e in recorder.of_type("log")]
    assert ("all repeats done", None) in logs
    assert ("a stray print from the benchmark", "stderr") in logs
    assert_all_gone(recorder.pids)


def test_a_slow_teardown_after_the_result_is_waited_for(tmp_path, monkeypatch):
    """A child that takes seconds to end after its result (loader workers, pinned memory) is not
    killed for it; one that takes longer than the grace is, and its document says so."""
    result, recorder = run("test.slow_exit", tmp_path, params={"exit_s": 3.0})
    assert result.status == "ok" and result.document["exit_code"] == 0
    assert not any("did not exit" in w or "after reporting" in w for w in result.document["warnings"])
    assert result.document["duration_s"] >= 3.0
    monkeypatch.setattr(runner, "EXIT_GRACE_S", 0.5)
    result, recorder = run("test.slow_exit", tmp_path, params={"exit_s": 30.0})
    assert result.status == "ok"
    assert "the worker closed its output but did not exit; it was killed" in result.document["warnings"]
    assert_all_gone(recorder.pids)


def test_a_benchmark_adds_notes_from_its_runs_telemetry(tmp_path):
    result, _ = run("test.noted", tmp_path)
    assert result.status == "ok"
    warnings = result.document["warnings"]
    assert "note: cpu (fixture), telemetry" in warnings or any(w.startswith("busy machine") for w in warnings)


def test_params_are_resolved_and_passed_to_the_child(tmp_path):
    result, _ = run("test.params", tmp_path, params={"mode": "b"}, save=False)
    assert result.status == "ok", result.document["reason"]
    assert result.path is None and not any(tmp_path.iterdir())
    assert result.document["params"] == {"mode": "b", "path": None, "sizes": [1, 2]}
    assert result.document["details"]["params"] == {"mode": "b", "path": None, "sizes": [1, 2]}


# -- runs that fail --------------------------------------------------------------------------------

CRASHES = [
    # id, error_kind, reason contains, exit signal
    ("test.segfault", "crash", "killed by SIGSEGV", "SIGSEGV"),
    ("test.sigkill", "crash", "killed by SIGKILL", "SIGKILL"),
    ("test.raises", "exception", "RuntimeError: boom from the fixture", None),
    ("test.oom", "out_of_memory", "out of memory: fixture could not allocate 1 TiB", None),
    ("test.cuda_oom", "out_of_memory", "out of memory: CUDA out of memory", None),
    ("test.unavailable", "unavailable", "the fixture decided it cannot run here", None),
    ("test.no_result", "crash", "exited without a result", None),
    ("test.no_samples", "no_samples", "no valid samples", None),
]


@pytest.mark.parametrize("bench_id, kind, reason, sig", CRASHES, ids=[c[0] for c in CRASHES])
def test_failures_become_failed_documents(tmp_path, bench_id, kind, reason, sig):
    result, recorder = run(bench_id, tmp_path)
    doc = result.document

    assert result.status == "failed" and doc["status"] == "failed"
    assert doc["error_kind"] == kind
    assert reason in doc["reason"]
    assert doc["exit_signal"] == sig
    assert doc["figure"] is None
    assert isinstance(doc["log_tail"], list)
    assert store.load_result(result.path)["status"] == "failed"
    assert recorder.of_type("finished")[0]["status"] == "failed"
    assert_all_gone(recorder.pids)
    assert_next_run_works(tmp_path)


def test_segfault_leaves_a_python_traceback_in_the_log(tmp_path):
    result, _ = run("test.segfault", tmp_path, save=False)
    assert result.document["exit_code"] < 0
    tail = "\n".join(result.document["log_tail"])
    assert "about to segfault" in tail and "Segmentation fault" in tail and "_segfault" in tail


def test_exception_keeps_the_traceback_tail(tmp_path):
    result, recorder = run("test.raises", tmp_path, save=False)
    assert result.document["exit_code"] == 1
    assert any('raise RuntimeError("boom from the fixture")' in line for line in result.document["log_tail"])
    error = recorder.of_type("error")[0]
    assert error["kind"] == "exception" and error["traceback"][-1] == "RuntimeError: boom from the fixture"


def test_timeout_kills_the_group_even_when_sigterm_is_ignored(tmp_path, monkeypatch):
    """test.hang ignores SIGTERM and declares default_timeout_s=1.5, which applies here, counted from its
    progress event (it has ignored SIGTERM and reported its pid by then)."""
    result, recorder = _timeout_run(monkeypatch, "test.hang", tmp_path, lambda e: e["type"] == "progress")
    doc = result.document
    assert doc["status"] == "failed" and doc["error_kind"] == "timeout"
    assert doc["timeout_s"] == 1.5 and "timed out after 1.5 s while waiting for nothing (25% done)" in doc["reason"]
    assert doc["exit_signal"] == "SIGKILL"  # SIGTERM was ignored: only the escalation ended it
    assert len(recorder.pids) == 2 and recorder.pids[0] == recorder.pids[1]
    assert_all_gone(recorder.pids)
    assert_next_run_works(tmp_path)


def test_cancel_from_another_thread_ends_child_and_grandchild(tmp_path):
    recorder = Recorder()
    cancel = threading.Event()
    results = []
    thread = threading.Thread(target=lambda: results.append(
        runner.run_benchmark("test.slow", on_event=recorder, cancel=cancel, results_dir=tmp_path)))
    thread.start()
    assert recorder.grandchild.wait(30), "the fixture never reported its grandchild"
    child, grandchild = recorder.pids
    assert _alive(child) and _alive(grandchild)
    cancel.set()
    thread.join(30)
    assert not thread.is_alive()

    doc = results[0].document
    assert doc["status"] == "cancelled" and doc["error_kind"] == "cancelled"
    assert doc["reason"] == "cancelled by the user" and doc["figure"] is None
    assert doc["exit_signal"] == "SIGTERM"
    assert store.load_result(results[0].path)["status"] == "cancelled"
    assert_all_gone([child, grandchild])
    assert_next_run_works(tmp_path)


def test_keyboard_interrupt_cancels_writes_and_reraises(tmp_path):
    recorder = Recorder()

    def on_event(event):
        recorder(event)
        if event["type"] == "metric":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run_benchmark("test.slow", on_event=on_event, results_dir=tmp_path)
    (path,) = tmp_path.iterdir()
    assert store.load_result(path)["status"] == "cancelled"
    assert_all_gone(recorder.pids)


def test_exception_in_on_event_ends_the_child_and_propagates(tmp_path):
    recorder = Recorder()

    def on_event(event):
        recorder(event)
        if event["type"] == "metric":
            raise ValueError("GUI bug")

    with pytest.raises(ValueError, match="GUI bug"):
        runner.run_benchmark("test.slow", on_event=on_event, results_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert_all_gone(recorder.pids)


def test_timeout_also_ends_the_grandchild(tmp_path, monkeypatch):
    # counted from the child's report of its grandchild: the timeout must find the grandchild there
    result, recorder = _timeout_run(monkeypatch, "test.slow", tmp_path,
                                    lambda e: e["type"] == "metric" and e["name"] == "grandchild_pid",
                                    timeout_s=1.0, save=False)
    assert result.document["error_kind"] == "timeout"
    assert len(recorder.pids) == 2
    assert_all_gone(recorder.pids)


def test_a_flooding_child_can_be_cancelled_and_keeps_a_bounded_log(tmp_path):
    cancel = threading.Event()
    seen = {"lines": 0, "pids": []}

    def on_event(event):
        if event["type"] == "started" or event["type"] == "metric":
            seen["pids"].append(event.get("pid") or event.get("value"))
        elif event["type"] == "log":
            seen["lines"] += 1
            if seen["lines"] >= 2000:
                cancel.set()

    result = runner.run_benchmark("test.flood", on_event=on_event, cancel=cancel, results_dir=tmp_path)
    doc = result.document
    assert doc["status"] == "cancelled"
    assert len(doc["log_tail"]) == runner.LOG_TAIL_LINES
    assert doc["log_tail"][-1].startswith("flood line ")
    assert_all_gone(seen["pids"])


def test_garbage_on_stdout_goes_to_the_log(tmp_path):
    result, recorder = run("test.garbage", tmp_path)
    assert result.status == "ok", result.document["reason"]
    assert result.document["figure"]["value"] == 2.0  # the printed fake result was not taken
    logged = {e["message"] for e in recorder.of_type("log")}
    assert "plain text on stdout" in logged
    assert any(m.startswith("raw bytes on fd 1") for m in logged)
    assert '{"half a json line' in logged
    assert "a line on stderr" in logged
    assert len(recorder.of_type("result")) == 1
    assert_all_gone(recorder.pids)


def test_bad_input_raises_before_anything_starts(tmp_path):
    recorder = Recorder()
    with pytest.raises(KeyError, match="test.ok"):
        runner.run_benchmark("test.nope", on_event=recorder, results_dir=tmp_path)
    with pytest.raises(ParamError, match="below the minimum"):
        runner.run_benchmark("test.ok", {"scale": "-1"}, on_event=recorder, results_dir=tmp_path)
    with pytest.raises(ParamError, match="no parameter bogus"):
        runner.run_benchmark("test.ok", {"bogus": 1}, on_event=recorder, results_dir=tmp_path)
    assert recorder.events == [] and not any(tmp_path.iterdir())


def test_unavailable_benchmark_is_recorded_without_starting(tmp_path):
    result, recorder = run("test.self_unavailable", tmp_path)
    doc = result.document
    assert doc["status"] == "failed" and doc["error_kind"] == "unavailable"
    assert doc["reason"] == "not available here: fixture availability says no"
    assert doc["exit_code"] is None and doc["telemetry"] is None and doc["telemetry_reason"]
    assert [e["type"] for e in recorder.events] == ["finished"]
    assert result.path.is_file()


def test_save_error_is_reported_not_raised(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result, _ = run("test.ok", blocker, params={"samples": [1]})
    assert result.status == "ok" and result.path is None
    assert "could not write the result" in result.save_error


# -- telemetry -------------------------------------------------------------------------------------

class RecordingSampler:
    """Stands in for the GUI's shared sampler: records what the runner asks of it."""

    running = True

    def __init__(self):
        self.watched = []
        self.windows = []

    def watch(self, pid):
        self.watched.append(pid)

    def summary_for_result(self, since, until):
        self.windows.append((since, until))
        return {"samples": 3, "seed": {"cpu_util_percent": {"mean": 50.0, "max": 90.0}}}


def test_given_sampler_watches_the_child_and_is_summarised(tmp_path):
    sampler = RecordingSampler()
    before = time.time()
    result, recorder = run("test.ok", tmp_path, params={"samples": [1, 2]}, sampler=sampler, save=False)
    after = time.time()
    assert sampler.watched == [recorder.pids[0], None]
    (since, until), = sampler.windows
    assert before <= since <= until <= after
    assert result.document["telemetry"] == {"samples": 3, "seed": {"cpu_util_percent": {"mean": 50.0, "max": 90.0}}}
    assert result.document["telemetry_reason"] is None


def test_broken_sampler_costs_only_the_telemetry(tmp_path):
    class Broken(RecordingSampler):
        def summary_for_result(self, since, until):
            raise RuntimeError("sampler fell over")

    result, _ = run("test.ok", tmp_path, params={"samples": [1, 2]}, sampler=Broken(), save=False)
    assert result.status == "ok"
    assert result.document["telemetry"] is None
    assert "sampler fell over" in result.document["telemetry_reason"]


def test_runner_samples_by_itself_without_a_sampler(tmp_path):
    result, _ = run("test.ok", tmp_path, params={"samples": [1, 2]}, save=False)
    doc = result.document
    if importlib.util.find_spec("hwbench_gui.engine.telemetry") is None:
        assert doc["telemetry"] is None and "telemetry module unavailable" in doc["telemetry_reason"]
    else:
        assert doc["telemetry"]["interval_s"] == runner.SAMPLER_INTERVAL_S


# -- the child command -----------------------------------------------------------------------------

def test_child_command_normal_and_frozen(monkeypatch):
    assert child.worker_command() == [sys.executable, "-m", "hwbench_gui", "--hwbench-worker"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    command = child.worker_command({"id": "gpu.matmul", "params": {"size": 1024}})
    assert command[:2] == [sys.executable, "--hwbench-worker"]
    assert json.loads(command[2]) == {"id": "gpu.matmul", "params": {"size": 1024}}


def test_describe_exit():
    assert runner.describe_exit(3) == "exited with status 3"
    assert runner.describe_exit(-11).startswith("was killed by SIGSEGV")


# -- the worker, in this process -------------------------------------------------------------------

def _protocol_lines(text):
    events = [protocol.parse_line(line) for line in text.splitlines() if line.strip()]
    assert all(e is not None for e in events), text
    return events


def test_worker_keeps_stdout_for_the_protocol(capfd):
    code = worker.main([json.dumps({"id": "test.ok", "params": {"samples": [1, 2, 3]}})])
    out, err = capfd.readouterr()
    assert code == 0
    events = _protocol_lines(out)
    assert events[-1]["type"] == "result" and events[-1]["outcome"]["samples"] == [1.0, 2.0, 3.0]
    assert "a stray print from the benchmark" in err
    # stdout works normally again afterwards
    print("after")
    assert capfd.readouterr().out == "after\n"


@pytest.mark.parametrize("argv, code, kind", [
    ([], 2, "bad_spec"),
    (["{not json"], 2, "bad_spec"),
    (['{"params": {}}'], 2, "bad_spec"),
    (['{"id": "test.nope"}'], 1, "unknown_benchmark"),
    (['{"id": "test.ok", "params": {"scale": 1000}}'], 1, "bad_params"),
    (['{"id": "test.unavailable"}'], 1, "unavailable"),
])
def test_worker_errors(capfd, argv, code, kind):
    assert worker.main(argv) == code
    events = _protocol_lines(capfd.readouterr().out)
    assert [e["type"] for e in events][-1] == "error" and events[-1]["kind"] == kind


def test_worker_reads_the_spec_from_stdin(capfd, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO('{"id": "test.ok", "params": {"samples": [7]}}'))
    assert worker.main(["-"]) == 0
    assert _protocol_lines(capfd.readouterr().out)[-1]["outcome"]["samples"] == [7.0]


def test_child_params_pass_defaults_through_and_check_the_rest():
    bench = registry.get("test.params")
    assert worker.child_params(bench, {"mode": "a", "path": None, "sizes": [1, 2]}) == \
        {"mode": "a", "path": None, "sizes": [1, 2]}
    assert worker.child_params(bench, {"sizes": "3,4"}) == {"mode": "a", "path": None, "sizes": [3, 4]}
    with pytest.raises(ParamError):
        worker.child_params(bench, {"mode": "c"})
    with pytest.raises(ParamError):
        worker.child_params(bench, {"other": 1})


# -- protocol --------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["", "hello", "{", '{"type": "nope"}', "[1, 2]", '{"message": "x"}', "42"])
def test_parse_line_rejects_what_is_not_an_event(line):
    assert protocol.parse_line(line) is None


def test_encode_stores_non_finite_as_null():
    import numpy as np

    line = protocol.encode({"type": "metric", "value": float("nan"), "arr": np.arange(3), "x": np.float32(1.5),
                            "t": (1, float("inf"))})
    assert json.loads(line) == {"type": "metric", "value": None, "arr": [0, 1, 2], "x": 1.5, "t": [1, None]}
    assert protocol.parse_line(line)["type"] == "metric"


# -- registry --------------------------------------------------------------------------------------

def test_registry_reports_broken_modules_without_hiding_others(monkeypatch):
    monkeypatch.setenv(registry.EXTRA_ENV, f"{FIXTURE_BENCHMARKS}, bench_fixtures.does_not_exist")
    ids = [b.id for b in registry.all_benchmarks()]
    assert "test.ok" in ids
    errors = registry.module_errors()
    assert "No module named 'bench_fixtures.does_not_exist'" in errors["bench_fixtures.does_not_exist"]
    assert set(registry.builtin_modules()) >= {"disk_read", "cpu_decode", "host_membw", "gpu_pcie", "gpu_d2d",
                                               "gpu_p2p", "gpu_matmul", "models"}
    for name in registry.builtin_modules():  # each built-in module is either loaded or explained
        module = f"hwbench_gui.engine.benchmarks.{name}"
        assert module in errors or importlib.util.find_spec(module) is not None


def test_a_benchmark_module_is_registered_where_it_is_declared(tmp_path, monkeypatch):
    import hwbench_gui.engine.benchmarks as package

    (tmp_path / "zz_declared_here.py").write_text(
        "from hwbench_gui.engine.spec.benchmark import Benchmark\n"
        "BENCHMARK = Benchmark(id='test.declared_here', title='Declared here', category='Test',\n"
        "                      description='found by the registry without a list', params=(),\n"
        "                      run=lambda params, report: None)\n")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    modules = registry.builtin_modules()
    assert modules[:3] == ("disk_read", "cpu_decode", "host_membw")  # the data path's order first
    assert modules[-1] == "zz_declared_here"
    assert "test.declared_here" in [b.id for b in registry.all_benchmarks()]


def test_registry_get_unknown_names_the_known_ids():
    with pytest.raises(KeyError) as info:
        registry.get("test.nope")
    assert "test.ok" in info.value.args[0] and "test.raises" in info.value.args[0]


@pytest.mark.parametrize("gpus, need_gpu, need_two", [
    (0, "No NVIDIA GPU or driver found", "No NVIDIA GPU or driver found"),
    (1, None, "needs at least 2 NVIDIA GPUs; NVML sees 1"),
    (2, None, None),
])
def test_availability_of_gpu_needs(monkeypatch, gpus, need_gpu, need_two):
    from hwbench_gui.engine import nvml

    monkeypatch.setattr(nvml, "device_count", lambda: gpus)
    no_driver = "NVML could not start: NVML Shared Library Not Found (NVMLError_LibraryNotFound)"
    monkeypatch.setattr(nvml, "unavailable_reason", lambda: None if gpus else no_driver)
    assert registry.availability(registry.get("test.needs_gpu")) == need_gpu
    assert registry.availability(registry.get("test.needs_two_gpus")) == need_two


def test_availability_of_frameworks_and_own_check(monkeypatch):
    import dataclasses

    bench = registry.get("test.ok")
    assert registry.availability(bench) is None
    assert "unknown requirement 'quantum'" in registry.availability(registry.get("test.needs_unknown"))
    assert registry.availability(registry.get("test.self_unavailable")) == "fixture availability says no"

    def broken():
        raise OSError("probe exploded")

    assert "availability check failed: OSError: probe exploded" in registry.availability(
        dataclasses.replace(bench, availability=broken))
    monkeypatch.setattr(registry.importlib.util, "find_spec", lambda name, *a: None)
    assert registry.availability(dataclasses.replace(bench, needs=frozenset({"tf"}))) == \
        "TensorFlow is not installed (no module 'tensorflow')"
    assert registry.availability(dataclasses.replace(bench, needs=frozenset({"torch"}))) == \
        "PyTorch is not installed (no module 'torch')"


@pytest.mark.parametrize("line, noise", [
    ("2026-12-05 10:00:00.123456: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on.", True),
    ("I0000 00:00:1733400000.123456   1234 cuda_executor.cc:1015] successful NUMA node read", True),
    ("E0000 00:00:1733400000.654321   1234 cuda_dnn.cc:8310] Unable to register cuDNN factory", True),
    ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR", True),
    ("To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow", True),
    ("/venv/lib/python3.11/site-packages/torch/amp/grad_scaler.py:132: UserWarning: torch.cuda.amp is deprecated",
     True),
    ("a stray print from the benchmark", False),
    ("Traceback (most recent call last):", False),
    ("Intel MKL WARNING: the benchmark asked for 8 threads", False),
], ids=["tf timestamped", "absl info", "absl error", "absl preamble", "cpu flags", "library warning", "own print",
        "traceback", "other"])
def test_framework_chatter_is_told_from_the_benchmarks_own_lines(line, noise):
    from hwbench_gui.engine.run.framework_noise import is_framework_noise

    assert is_framework_noise(line) is noise
