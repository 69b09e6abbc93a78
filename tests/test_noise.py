"""Noise beside a run: other processes' CPU and GPU use, and the run's own short-lived processes."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from hwbench_gui.engine.telemetry.host_metrics import ProcessTreeReader
from hwbench_gui.engine.telemetry.summary import BUSY_CPU_PERCENT, noise_summary

# Each grandchild burns this much CPU time (not wall time: the same on a loaded machine) and ends.
BURN_CPU_S = 0.3
CHILDREN = 3
PARENT = f"""
import subprocess, sys, time
burn = "import time\\nwhile time.process_time() < {BURN_CPU_S}: pass"
for _ in range({CHILDREN}):
    subprocess.run([sys.executable, "-c", burn], check=True)
print("done", flush=True)
time.sleep(60)
"""


def test_cpu_of_children_that_ended_between_two_reads_counts_for_the_tree():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        reader = ProcessTreeReader()
        reader.watch(parent.pid)
        first: dict = {}
        t0 = time.monotonic()
        reader.read(t0, first)
        assert parent.stdout.readline().strip() == "done"  # every grandchild came and went
        second: dict = {}
        t1 = time.monotonic()
        reader.read(t1, second)
        tree_cpu_s = second["proc_cpu_percent"] / 100.0 * (t1 - t0)
        assert tree_cpu_s >= 0.8 * CHILDREN * BURN_CPU_S, tree_cpu_s
    finally:
        parent.kill()
        parent.wait()


def test_a_steady_other_load_makes_the_machine_busy_and_a_spike_does_not():
    spike = noise_summary({"others_cpu_percent": np.array([0.0, 1.0, 0.0, 480.0, 2.0]),
                           "others_gpu_processes": np.array([0.0, 0.0, 0.0, 0.0, 0.0])})
    assert not spike["busy"] and spike["others_cpu_percent"]["median"] == 1.0
    assert spike["others_cpu_percent"]["mean"] == np.mean([0.0, 1.0, 0.0, 480.0, 2.0])
    steady = noise_summary({"others_cpu_percent": np.array([20.0, 30.0, 25.0, 15.0, 90.0])})
    assert steady["busy"] and steady["others_cpu_percent"]["median"] == 25.0 > BUSY_CPU_PERCENT
    assert "25 % of a CPU core" in steady["reasons"][0]
    gpu = noise_summary({"others_cpu_percent": np.array([0.0, 0.0]), "others_gpu_processes": np.array([0.0, 1.0])})
    assert gpu["busy"] and "1 other process(es) used the GPU" in gpu["reasons"][0]
    unknown = noise_summary({"others_cpu_percent": np.array([np.nan, np.nan])})
    assert not unknown["busy"] and unknown["others_cpu_percent"]["median"] is None


def test_a_run_beside_a_cpu_load_carries_the_busy_warning(tmp_path, fixture_benchmarks):
    """Two CPU-burning processes beside a short benchmark run: its document says the machine was busy."""
    from hwbench_gui.engine.run import runner

    burn = "import time\nt = time.time()\nwhile time.time() - t < 60: pass"
    loads = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(2)]
    try:
        result = runner.run_benchmark("test.timed", {"repeats": "3", "window_s": "1.0"}, results_dir=tmp_path,
                                      timeout_s=60)
    finally:
        for load in loads:
            load.kill()
            load.wait()
    doc = result.document
    assert doc["status"] == "ok", doc["reason"]
    assert doc["telemetry"]["noise"]["busy"], doc["telemetry"]["noise"]
    assert any(w.startswith("busy machine:") for w in doc["warnings"]), doc["warnings"]


def test_the_stored_telemetry_is_that_of_the_timed_windows(tmp_path, fixture_benchmarks):
    from hwbench_gui.engine.run import runner

    # a warm-up of several sampler intervals, so the whole run holds samples that the timed phase must not
    result = runner.run_benchmark("test.timed", {"repeats": "3", "window_s": "1.2", "warmup_s": "2.5"},
                                  results_dir=tmp_path, timeout_s=60)
    doc = result.document
    assert doc["status"] == "ok", doc["reason"]
    timed, whole = doc["telemetry"], doc["telemetry_whole_run"]
    assert timed["scope"] == "timed phase" and whole["scope"] == "whole run"
    assert len(timed["windows"]) == 3
    for start, end in timed["windows"]:
        assert end - start >= 1.2  # the child's own clock: at least the window it slept
    starts = [w[0] for w in timed["windows"]]
    assert starts == sorted(starts) and timed["windows"][0][0] >= whole["since"] - 1.0
    # only samples inside the windows: fewer than the whole run's, none from the warm-up
    assert 0 < timed["samples"] < whole["samples"]
    assert all(any(a <= t <= b for a, b in timed["windows"]) for t in (timed["since"], timed["until"]))


def test_timed_windows_from_phase_events():
    from hwbench_gui.engine.run.runner import timed_windows

    events = [{"phase": "warmup", "state": "start", "t": 1.0}, {"phase": "warmup", "state": "end", "t": 2.0},
              {"phase": "timed", "state": "start", "t": 2.5}, {"phase": "timed", "state": "end", "t": 4.0},
              {"phase": "timed", "state": "start", "t": 4.1}]  # the child died in its second window
    assert timed_windows(events, run_end=9.0) == [(2.5, 4.0), (4.1, 9.0)]
    assert timed_windows([], run_end=9.0) == []
