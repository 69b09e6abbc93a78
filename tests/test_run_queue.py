"""The run queue, without Qt: order, per-run status and progress, listeners, clear, cancel, suites.

Runs are real child processes of the fixture benchmarks in tests/bench_fixtures/crashy.py.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from hwbench_gui.engine.run import suites
from hwbench_gui.engine.run.queue import RunQueue, RunSkipped, run_suite


pytestmark = pytest.mark.skipif(os.name != "posix", reason="fixtures use POSIX signals")


pytestmark = [pytestmark, pytest.mark.usefixtures("fixture_benchmarks")]


@pytest.fixture
def queue(tmp_path):
    queue = RunQueue(results_dir=tmp_path)
    queue.changes = []
    queue.add_listener(queue.changes.append)
    return queue


def _kinds(queue, run):
    return [c.kind for c in queue.changes if c.run is run and c.kind != "event"]


def test_runs_in_order_with_status_progress_and_listeners(queue):
    ok = queue.add("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    crash = queue.add("test.segfault", {})
    assert [r.status for r in queue.pending()] == ["queued", "queued"]
    done = queue.run_all()
    assert done == [ok, crash] and queue.pending() == []
    assert (ok.status, crash.status) == ("ok", "failed")
    assert ok.fraction == 1.0 and ok.message == "repeat 3"
    assert ok.result.path is not None and ok.document["status"] == "ok"
    assert "SIGSEGV" in crash.document["reason"]
    assert _kinds(queue, ok) == ["queued", "started", "finished"]
    events = [c.event["type"] for c in queue.changes if c.run is ok and c.kind == "event"]
    assert "progress" in events and events[-1] == "finished"


def test_clear_drops_waiting_runs_and_an_empty_queue_takes_nothing(queue):
    first = queue.add("test.ok", {})
    queue.add("test.ok", {})
    dropped = queue.clear()
    assert first in dropped and queue.pending() == []
    assert _kinds(queue, first) == ["queued", "removed"]
    assert queue.take_next() is None and queue.run_all() == []


def test_a_set_cancel_runs_nothing_and_cancel_during_a_run_records_cancelled(queue):
    queue.add("test.slow", {})
    stop = threading.Event()
    stop.set()
    assert queue.run_all(stop) == [] and len(queue.pending()) == 1

    cancel = threading.Event()
    queue.add_listener(lambda change: cancel.set() if change.kind == "event"
                       and change.event.get("type") == "progress" else None)
    run = queue.run_next(cancel)
    assert run.status == "cancelled" and run.document["status"] == "cancelled"


def test_a_listener_that_raises_fails_the_run_and_propagates(queue):
    def explode(change):
        if change.kind == "event" and change.event.get("type") == "started":
            raise RuntimeError("listener broke")

    queue.add_listener(explode)
    run = queue.add("test.ok", {})
    with pytest.raises(RuntimeError, match="listener broke"):
        queue.run_next()
    assert run.status == "failed" and "listener broke" in run.document["reason"]
    assert _kinds(queue, run)[-1] == "finished"


def test_add_suite_expands_and_prepare_can_skip(queue, monkeypatch):
    monkeypatch.setitem(suites.SUITES, "tiny", suites.Suite("tiny", "Tiny", "", axes={"scale": (1.0, 2.0)},
                                                            bench_axis=("test.ok", "test.params")))

    def prepare(run):
        if run.bench_id == "test.params":
            raise RunSkipped("not here")
        return {**run.params, "samples": [1.0]}

    queued, skipped = queue.add_suite("tiny", prepare=prepare)
    assert [(r.bench_id, r.params) for r in queued] == [("test.ok", {"scale": 1.0, "samples": [1.0]}),
                                                        ("test.ok", {"scale": 2.0, "samples": [1.0]})]
    assert [(r.label, reason) for r, reason in skipped] == [("test.params 1.0", "not here"),
                                                           ("test.params 2.0", "not here")]
    assert queued[0].suite_run.label == "test.ok 1.0"


def test_run_suite_goes_through_the_queue(monkeypatch, tmp_path):
    monkeypatch.setitem(suites.SUITES, "tiny", suites.Suite("tiny", "Tiny", "", axes={"scale": (1.0, 2.0)},
                                                            bench_axis=("test.ok",)))
    seen, events = [], []

    def on_run(i, total, run):
        seen.append((i, total, run.label))
        return events.append

    done = run_suite("tiny", {"scale": "2.0", "samples": [3]}, on_run=on_run, results_dir=tmp_path)
    assert seen == [(0, 1, "test.ok 2.0")]
    assert [(run.label, result.status) for run, result in done] == [("test.ok 2.0", "ok")]
    assert done[0][1].document["figure"]["value"] == 6.0
    assert any(e["type"] == "progress" for e in events)


# -- a suite as a whole: what cannot run here, resume, one progress over all runs ---------------------

def _tiny_suite(monkeypatch, scales=(1.0, 2.0)):
    monkeypatch.setitem(suites.SUITES, "tiny", suites.Suite("tiny", "Tiny", "", axes={"scale": scales},
                                                            bench_axis=("test.ok",)))


def test_cells_that_cannot_run_here_say_why(monkeypatch):
    from hwbench_gui.engine.run import queue as queue_mod

    monkeypatch.setitem(queue_mod.FRAMEWORK_MODULES, "tf", ("hwbench_no_such_module", "TensorFlow is not installed"))
    tf_run = suites.SuiteRun("model.resnet50", {"framework": "tf", "precision": "fp32"})
    assert queue_mod.unavailable_here(tf_run, gpu_count=1) == "TensorFlow is not installed"
    fp16 = suites.SuiteRun("model.resnet50", {"framework": "torch", "precision": "fp16-amp"})
    assert "no GPU found" in queue_mod.unavailable_here(fp16, gpu_count=0)
    assert queue_mod.unavailable_here(fp16, gpu_count=1) is None
    on_cpu = suites.SuiteRun("model.resnet50", {"framework": "torch", "precision": "fp16-amp", "device": "cpu"})
    assert queue_mod.unavailable_here(on_cpu, gpu_count=0) is None  # asked for: measured on the CPU
    fp32 = suites.SuiteRun("model.resnet50", {"framework": "torch", "precision": "fp32"})
    assert queue_mod.unavailable_here(fp32, gpu_count=0) is None  # runs on the CPU, which the run says
    cuda = suites.SuiteRun("model.resnet50", {"framework": "torch", "precision": "fp32", "device": "cuda:0"})
    assert "device=cuda" in queue_mod.unavailable_here(cuda, gpu_count=0)


def test_resume_skips_the_runs_whose_ok_document_is_in_the_folder(monkeypatch, tmp_path):
    from hwbench_gui.engine.run.queue import plan_suite

    _tiny_suite(monkeypatch)
    first = run_suite("tiny", {"samples": [3]}, results_dir=tmp_path)
    assert [result.status for _, result in first] == ["ok", "ok"]
    plan = plan_suite("tiny", {"samples": [3]}, results_dir=tmp_path, resume=True, gpu_count=0)
    assert plan.to_run == [] and [run.label for run, _ in plan.finished] == ["test.ok 1.0", "test.ok 2.0"]
    # without --resume everything runs again; another value of a parameter is another run
    assert len(plan_suite("tiny", {"samples": [3]}, results_dir=tmp_path, gpu_count=0).to_run) == 2
    assert len(plan_suite("tiny", {"samples": [4]}, results_dir=tmp_path, resume=True, gpu_count=0).to_run) == 2
    # a run that was cancelled or failed, or whose document is gone, runs again
    done_path = first[1][1].path
    doc = json.loads(done_path.read_text())
    done_path.write_text(json.dumps({**doc, "status": "cancelled"}))
    plan = plan_suite("tiny", {"samples": [3]}, results_dir=tmp_path, resume=True, gpu_count=0)
    assert [run.label for run in plan.to_run] == ["test.ok 2.0"]
    again = run_suite("tiny", {"samples": [3]}, results_dir=tmp_path, plan=plan)
    assert [(run.label, result.status) for run, result in again] == [("test.ok 2.0", "ok")]


def test_a_document_from_another_machine_does_not_count_as_done(monkeypatch, tmp_path):
    from hwbench_gui.engine.run.queue import plan_suite

    _tiny_suite(monkeypatch, scales=(1.0,))
    (run, result), = run_suite("tiny", {}, results_dir=tmp_path)
    doc = json.loads(result.path.read_text())
    result.path.write_text(json.dumps({**doc, "hostname": "elsewhere", "inventory": {"gpus": []}}))
    assert len(plan_suite("tiny", {}, results_dir=tmp_path, resume=True, gpu_count=0).to_run) == 1


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_suite_progress_and_eta_over_all_runs():
    """One ETA: the run under way by its own fraction (or its estimate before it reports one), each waiting
    run by its estimate; a run never timed here is unknown, never guessed from the others."""
    from hwbench_gui.engine.run.queue import SuiteProgress

    clock = _Clock()
    progress = SuiteProgress(4, done_before=1, clock=clock, estimates=[40.0, 60.0, 90.0])
    progress.start("a")
    clock.now = 10.0
    assert progress.remaining_s() == pytest.approx(30 + 60 + 90)  # its estimate less what it has run
    assert progress.text() == "suite 2/4 (25%), ETA 3 min 00 s"
    clock.now = 30.0
    progress.update(0.5)  # half of this run in 30 s: 30 s left, then 60 s and 90 s
    assert progress.fraction() == pytest.approx(1.5 / 4)
    assert progress.remaining_s() == pytest.approx(30 + 60 + 90)
    clock.now = 60.0
    progress.finish()
    progress.start("b")
    clock.now = 100.0
    progress.update(0.8)  # 40 s of 50: 10 s left, then the last run's 90 s (not the mean of those done)
    assert progress.remaining_s() == pytest.approx(10 + 90)
    assert progress.text() == "suite 3/4 (70%), ETA 1 min 40 s"


def test_a_run_never_timed_here_makes_the_eta_unknown_not_guessed():
    from hwbench_gui.engine.run.queue import SuiteProgress

    clock = _Clock()
    progress = SuiteProgress(3, clock=clock, estimates=[20.0, None, None])
    progress.start("a")
    assert progress.remaining() == (40.0 - 0.0 - 20.0, 2) and progress.remaining_s() is None
    assert progress.text() == "suite 1/3 (0%), ETA 20 s + 2 runs never timed here"
    clock.now = 20.0
    progress.finish()
    progress.start("b")
    clock.now = 25.0  # the first run's 20 s say nothing about this one
    assert progress.text() == "suite 2/3 (33%), ETA unknown: never run on this machine or one like it"


def test_a_suite_whose_waiting_runs_were_dropped_ends_cancelled():
    from hwbench_gui.engine.run.queue import SuiteProgress

    progress = SuiteProgress(3, clock=_Clock(), estimates=[20.0, 30.0, 40.0])
    progress.start("a")
    progress.drop(2)  # Clear queue
    assert progress.remaining_s() == pytest.approx(20.0) and progress.dropped == 2
    progress.finish()
    progress.ended = "cancelled"
    assert progress.text() == "suite cancelled: 1 of 3 runs done"


def test_estimates_come_from_this_machines_runs_or_one_like_it(monkeypatch, tmp_path):
    """The median wall time of the same run measured here; else on a machine with this one's GPUs; else none
    (another machine's minutes say nothing about this one's)."""
    from hwbench_gui.engine.results import document
    from hwbench_gui.engine.run.queue import estimate_durations

    _tiny_suite(monkeypatch, scales=(1.0,))
    (run, result), = run_suite("tiny", {}, results_dir=tmp_path)
    doc = json.loads(result.path.read_text())
    here = [{**doc, "duration_s": d} for d in (10.0, 30.0, 11.0)]
    assert estimate_durations([run], here) == [11.0]
    elsewhere = {**doc, "hostname": "elsewhere", "duration_s": 5.0,
                 "inventory": {"gpus": [{"name": "NVIDIA H200", "uuid": "GPU-x"}], "cpu": {}}}
    assert estimate_durations([run], [], [elsewhere]) == [None]  # a machine unlike this one
    h100_here = {"inventory": {"gpus": [{"name": "NVIDIA H100", "uuid": "GPU-z"}], "cpu": {}}}
    monkeypatch.setattr(document, "machine_facts", lambda: h100_here)
    assert estimate_durations([run], [], [elsewhere]) == [None]  # an H200's time says nothing on an H100
    like_here = {"inventory": {"gpus": [{"name": "NVIDIA H200", "uuid": "GPU-y"}], "cpu": {}}}
    monkeypatch.setattr(document, "machine_facts", lambda: like_here)
    assert estimate_durations([run], [], [elsewhere]) == [5.0]  # the same GPU: its time holds here
    assert estimate_durations([run], here, [elsewhere]) == [11.0]  # this machine's own runs come first
    older = {**doc, "benchmark": {**doc["benchmark"], "version": "0"}, "duration_s": 99.0}
    assert estimate_durations([run], [older]) == [None]  # another version of the benchmark is another run


def test_the_plan_says_how_long_in_one_line():
    from hwbench_gui.engine.run.queue import SuitePlan

    runs = [suites.SuiteRun("test.ok", {"scale": s}) for s in (1.0, 2.0, 3.0)]
    plan = SuitePlan("tiny", runs[:2], unavailable=[(runs[2], "no GPU")], estimates=[600.0, 1500.0])
    assert plan.summary() == "suite tiny: 3 runs: 2 to run (about 35 min 00 s here), 1 cannot run here"
    plan.estimates = [600.0, None]
    assert plan.summary() == ("suite tiny: 3 runs: 2 to run (about 10 min 00 s here, and 1 run never timed "
                              "here), 1 cannot run here")
    plan.estimates = [None, None]
    assert plan.summary() == ("suite tiny: 3 runs: 2 to run (time unknown: never run on this machine or one "
                              "like it), 1 cannot run here")


def test_cli_suite_lists_what_cannot_run_resumes_and_writes_the_report(monkeypatch, tmp_path, capsys):
    from hwbench_gui import cli
    from hwbench_gui.engine.run import queue as queue_mod

    _tiny_suite(monkeypatch)
    real = queue_mod.unavailable_here
    monkeypatch.setattr(queue_mod, "unavailable_here",
                        lambda run, gpus: "no GPU found" if run.params["scale"] == 2.0 else real(run, gpus))
    out = tmp_path / "results"
    assert cli.main(["run", "--suite", "tiny", "-p", "samples=3", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("suite tiny: 2 runs: 1 to run (time unknown: never run on this machine or one like it), "
            "1 cannot run here") in err
    assert "skipped, no GPU found: test.ok 2.0" in err
    assert "[1/1] test.ok 1.0" in err
    reports = re.search(r"(?:evaluation report|report \(HTML\)): (.+)", err).group(1).split(", ")
    assert all(Path(p).is_file() and Path(p).parent == out for p in reports)
    assert cli.main(["run", "--suite", "tiny", "-p", "samples=3", "--out", str(out), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "1 to run" not in captured.err and "none to run, 1 already done, 1 cannot run here" in captured.err
    assert "test.ok 1.0: " in captured.out and "[done before: " in captured.out
    plan = queue_mod.plan_suite("tiny", {"samples": [3]}, results_dir=out, gpu_count=0)
    assert plan.summary().startswith("suite tiny: 2 runs: 1 to run (about ") and " s here)" in plan.summary()


def test_resume_counts_only_the_current_benchmark_version_and_takes_the_newest_of_several(monkeypatch, tmp_path):
    """A document of an older version of the benchmark's code measured something else: it is not done. Of
    several documents that match, the newest (``started_at``) is the one the resumed suite reports."""
    from hwbench_gui.engine.run import registry
    from hwbench_gui.engine.run.queue import finished_document

    _tiny_suite(monkeypatch, scales=(1.0,))
    (run, result), = run_suite("tiny", {}, results_dir=tmp_path)
    doc = json.loads(result.path.read_text())
    assert finished_document(run, [doc]) is not None
    current = registry.get("test.ok").version
    older = {**doc, "benchmark": {**doc["benchmark"], "version": f"{current}-older"}}
    assert finished_document(run, [older]) is None
    early = {**doc, "started_at": "2026-01-01T00:00:00+00:00", "run_id": "early"}
    late = {**doc, "started_at": "2026-06-01T00:00:00+00:00", "run_id": "late"}
    assert finished_document(run, [early, late, older])["run_id"] == "late"
    assert finished_document(run, [late, early])["run_id"] == "late"
