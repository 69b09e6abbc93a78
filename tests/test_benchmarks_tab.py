"""The Benchmarks tab drives real child processes: a good run, a crash, a cancel; the tab survives all."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt

from hwbench_gui.engine.run import registry
from hwbench_gui.ui.context import AppContext

TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture
def tab(qtbot, qsettings, tmp_path, monkeypatch):
    monkeypatch.setenv(registry.EXTRA_ENV, "bench_fixtures.crashy")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(TESTS_DIR), os.environ.get("PYTHONPATH")] if p))
    monkeypatch.syspath_prepend(str(TESTS_DIR))
    from hwbench_gui.ui.benchmarks_tab import BenchmarksTab

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    widget = BenchmarksTab(context)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.shutdown()
    context.workers.shutdown(timeout_s=10)


def _wait_idle(qtbot, tab, timeout=30000):
    qtbot.waitUntil(lambda: not tab.is_running() and not tab.queue.pending(), timeout=timeout)


def _last_row(tab):
    row = tab.results.rowCount() - 1
    return [tab.results.item(row, c).text() for c in range(tab.results.columnCount())]


def test_catalogue_shows_availability_and_reasons(tab):
    tab.select("test.self_unavailable")
    assert not tab.run_button.isEnabled()
    assert "fixture availability says no" in tab.title.text()
    tab.select("test.ok")
    assert tab.run_button.isEnabled()
    # the form is generated from the declaration
    assert {"samples", "scale"} <= set(tab.form().values())


def test_run_from_the_form_writes_a_result_and_plots(qtbot, tab):
    tab.select("test.ok")
    tab.form().editor("scale").setValue(2.0)
    qtbot.mouseClick(tab.run_button, Qt.LeftButton)
    _wait_idle(qtbot, tab)
    row = _last_row(tab)
    assert row[1] == "test.ok" and row[5] == "ok"
    assert row[3].startswith("11 ")  # median of 2..20
    assert list((tab.context.results_dir).glob("*.json"))
    assert tab.progress.value() == 1000


def test_crash_is_a_failed_row_and_the_next_run_works(qtbot, tab):
    tab.enqueue("test.segfault", {})
    tab.enqueue("test.ok", {"samples": [1, 2, 3], "scale": 1.0})
    _wait_idle(qtbot, tab)
    rows = [[tab.results.item(r, c).text() for c in range(tab.results.columnCount())]
            for r in range(tab.results.rowCount())]
    statuses = {row[1]: row[5] for row in rows}
    assert statuses == {"test.segfault": "failed", "test.ok": "ok"}
    assert "SIGSEGV" in tab.run_status.text() or any("SIGSEGV" in r[3] for r in rows)


def test_cancel_ends_the_child_and_records_cancelled(qtbot, tab):
    pids = []
    tab.queue.add_listener(lambda change: pids.append(change.event.get("pid"))
                           if change.kind == "event" and change.event.get("type") == "started" else None)
    tab.enqueue("test.slow", {})
    qtbot.waitUntil(lambda: tab.is_running(), timeout=5000)
    qtbot.wait(1500)
    qtbot.mouseClick(tab.cancel_button, Qt.LeftButton)
    _wait_idle(qtbot, tab, timeout=15000)
    assert _last_row(tab)[5] == "cancelled"
    for pid in filter(None, pids):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_seed_suite_preset_queues_the_runs_that_can_run_here(tab, monkeypatch):
    started = []
    monkeypatch.setattr(tab, "_start_next", lambda: started.append(True))
    queued = tab.enqueue_suite("seed")
    ids = [run.bench_id for run in tab.queue.pending()]
    assert queued == len(ids) > 0
    assert set(ids) <= {"model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet"}
    assert all(run.params["precision"] in ("fp32", "fp16-amp") for run in tab.queue.pending())
    assert tab.queue_list.count() == queued
    tab._clear_queue()
