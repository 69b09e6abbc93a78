"""A demo run on a busy machine carries the busy warning a benchmark run does: the machine is sampled beside the
demo (it runs in this process, so the rest of the machine is "others"), and the document's telemetry, its warning
and the Benchmarks table's status say so. Each wait is for an event (the burner's CPU seconds), never a time."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

from hwbench_gui.demos.machine_watch import MachineWatch
from hwbench_gui.demos.results import demo_document, snake_eval_document
from hwbench_gui.engine.reports.flags import busy_reasons
from hwbench_gui.engine.telemetry.summary import BUSY_CPU_PERCENT

BURN_CPU_S = 0.8


def _burner() -> subprocess.Popen:
    """Another process that burns the CPU for good; it says "burning" once it has used BURN_CPU_S of it."""
    code = (f"import time\nwhile time.process_time() < {BURN_CPU_S}: pass\nprint('burning', flush=True)\n"
            "while True: pass")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _doc(telemetry):
    return demo_document("track", {"detector": "hog", "device": "cpu"}, [0.01] * 60,
                         started_at=datetime.now(timezone.utc), duration_s=0.6, device="cpu", telemetry=telemetry)


def test_a_demo_beside_a_busy_process_is_marked_busy():
    watch = MachineWatch(interval_s=0.1)
    burner = _burner()
    try:
        assert burner.stdout.readline().strip() == "burning"
    finally:
        telemetry = watch.finish()
        burner.kill()
        burner.wait()
        burner.stdout.close()
    noise = telemetry["noise"]
    assert noise["busy"] and noise["others_cpu_percent"]["median"] > BUSY_CPU_PERCENT
    doc = _doc(telemetry)
    assert busy_reasons(doc) == noise["reasons"]
    (warning,) = [w for w in doc["warnings"] if w.startswith("busy machine: ")]
    assert "other processes used" in warning and doc["telemetry"]["noise"]["busy"] is True
    snake = snake_eval_document({"scores": [1, 2], "mean": 1.5, "mean_steps": 10.0, "board": [12, 12]},
                                {"board": "12x12", "device": "cpu"}, started_at=datetime.now(timezone.utc),
                                eval_s=0.5, device="cpu", telemetry=telemetry)
    assert any(w.startswith("busy machine: ") for w in snake["warnings"])


def test_a_quiet_run_has_its_telemetry_and_no_warning():
    quiet = {"samples": 5, "noise": {"busy": False, "reasons": [], "others_cpu_percent": {"median": 1.0}}}
    doc = _doc(quiet)
    assert doc["telemetry"]["samples"] == 5 and busy_reasons(doc) == []
    assert not any(w.startswith("busy machine") for w in doc["warnings"])
    unsampled = _doc(None)
    assert unsampled["telemetry"] is None and "not sampled" in unsampled["telemetry_reason"]


def test_the_benchmarks_table_shows_a_busy_demo_run(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.benchmarks.results_table import COLUMN
    from hwbench_gui.ui.benchmarks.tab import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    busy = {"samples": 5, "noise": {"busy": True, "reasons": ["other processes used 190 % of a CPU core"]}}
    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    tab._add_result_row(_doc(busy))
    assert tab.results.item(0, COLUMN["Status"]).text().endswith("busy machine")
    tab.shutdown()
    context.workers.shutdown(timeout_s=10)
