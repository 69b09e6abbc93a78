"""The run queue, without Qt: order, per-run status and progress, listeners, clear, cancel, suites.

Runs are real child processes of the fixture benchmarks in tests/bench_fixtures/crashy.py.
"""

from __future__ import annotations

import os
import threading

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
