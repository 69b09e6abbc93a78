"""Telemetry sampler: timing, host, process and top-process figures, NVML failure isolation, ring, summary, CSV, CLI."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hwbench_gui.engine import nvml
from hwbench_gui.engine.telemetry import Sampler, decode_throttle_reasons, read_csv
from hwbench_gui.engine.telemetry.ring import RingBuffer
from hwbench_gui.engine.telemetry.summary import summarize

REPO_ROOT = Path(__file__).resolve().parent.parent


def _wait_for(predicate, timeout_s=10.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_timestamps_rise_with_the_interval_and_follow_a_change():
    sampler = Sampler(interval_s=0.1, history_s=60)
    sampler.start()
    try:
        assert _wait_for(lambda: len(sampler.history(metrics=["cpu_percent"])[0]) >= 8)
        sampler.set_interval(0.2)
        switched = time.time()
        assert _wait_for(lambda: len(sampler.history(since=switched + 0.05, metrics=["cpu_percent"])[0]) >= 6)
    finally:
        sampler.stop()
    assert not sampler.running
    t, _ = sampler.history(metrics=["cpu_percent"])
    assert np.all(np.diff(t) > 0)
    fast = np.diff(t[t < switched])
    slow = np.diff(t[t > switched + 0.05])
    assert abs(np.median(fast) - 0.1) <= 0.025, fast
    assert abs(np.median(slow) - 0.2) <= 0.05, slow
    assert abs(t[-1] - time.time()) < 5  # Unix seconds


def test_interval_limits():
    with pytest.raises(ValueError):
        Sampler(interval_s=0.05)
    sampler = Sampler(interval_s=0.5)
    with pytest.raises(ValueError):
        sampler.set_interval(11)


#: CPU seconds the busy grandchild burns: counted as CPU time, not as a share of a wall-clock span, so that the
#: figure holds on a loaded box where the child gets a fraction of a core.
BURN_CPU_S = 0.6


def test_busy_child_shows_in_cpu_and_watched_tree():
    # The watched pid is a parent that only waits; the CPU is burnt by its child, so the tree lookup has to
    # find the child. Each step waits for an event, never for a time: the parent starts the child on "go" (the
    # sampler has read the tree by then); the child prints its pid and waits for "burn" (the sampler has read
    # the tree with the child in it by then); it says "burnt" once it has used BURN_CPU_S of CPU time, and waits
    # to be killed.
    burn = ("import os, sys, time\nprint(os.getpid(), flush=True)\nsys.stdin.readline()\n"
            f"while time.process_time() < {BURN_CPU_S}: pass\nprint('burnt', flush=True)\ntime.sleep(600)")
    code = (f"import subprocess, sys; sys.stdin.readline(); "
            f"p = subprocess.Popen([sys.executable, '-c', {burn!r}]); p.wait()")
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sampler = Sampler(interval_s=0.2, history_s=600)
    sampler.watch(parent.pid)

    def read_after(moment: float) -> bool:
        """A sample began after ``moment``: what existed or was spent by then is in it."""
        return sampler.history(metrics=["proc_cpu_percent"])[0][-1:].tolist() > [moment]

    try:
        sampler.start()
        assert _wait_for(lambda: sampler.history()[0].size >= 2, 120)  # the tree read with the parent alone
        parent.stdin.write("go\n")
        parent.stdin.flush()
        int(parent.stdout.readline())  # the child's pid: it exists
        assert _wait_for(lambda now=time.time(): read_after(now), 120)
        parent.stdin.write("burn\n")
        parent.stdin.flush()
        assert parent.stdout.readline().strip() == "burnt"  # however long a loaded box takes
        assert _wait_for(lambda now=time.time(): read_after(now), 120)
    finally:
        sampler.stop()
        for child in __import__("psutil").Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()
        parent.stdin.close()
        parent.stdout.close()
    t, h = sampler.history()
    # The watched tree's CPU, summed over the samples (percent of a core × the span each covers), holds the
    # child's burn: the child was found under the parent and counted.
    counted_s = np.nansum(h["proc_cpu_percent"][1:] / 100.0 * np.diff(t))
    assert counted_s >= 0.85 * BURN_CPU_S, counted_s
    # The host saw a core busy for at least one sample: the burn alone fills one (it lasts three intervals of
    # CPU time); on a loaded box other processes fill them anyway.
    assert np.nanmax(h["cpu_percent"]) > 100.0 / sampler.cpu_count * 0.6
    assert np.nanmax(h["proc_rss_bytes"]) > 1e6
    per_core = np.nanmax(np.vstack([h[f"cpu{i}_percent"] for i in range(sampler.cpu_count)]))
    assert per_core > 60


def test_unwatched_process_metrics_are_na():
    sampler = Sampler(interval_s=0.5)
    sampler.sample_once()
    time.sleep(0.1)  # CPU % needs the jiffy counters to move
    sample = sampler.sample_once()
    assert sample["proc_cpu_percent"] is None and sample["proc_rss_bytes"] is None
    assert sample["cpu_percent"] is not None and sample["ram_used_bytes"] > 0


def test_top_processes_lists_this_busy_process():
    from hwbench_gui.engine.telemetry.processes import TopProcesses

    top = TopProcesses()
    top.sample(limit=10_000)
    end = time.process_time() + 0.2
    while time.process_time() < end:  # CPU time of our own, so the second sample has an interval to measure
        pass
    rows = top.sample(limit=10_000)
    me = next(row for row in rows if row.pid == os.getpid())
    assert me.cpu_percent > 0 and (me.rss_bytes or 0) > 0
    assert rows == sorted(rows, key=lambda r: (-r.cpu_percent, -(r.rss_bytes or 0)))


# -- a fake NVML layer (test scaffolding: this machine has no GPU) ---------------------------------


class FakeNVMLError(Exception):
    pass


class FakePynvml:
    NVMLError = FakeNVMLError
    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_PCIE_UTIL_TX_BYTES = 0
    NVML_PCIE_UTIL_RX_BYTES = 1
    NVML_NVLINK_MAX_LINKS = 4
    NVML_FEATURE_ENABLED = 1
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139

    def __init__(self):
        self.kib = 0

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return f"h{i}"

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=87, memory=41)

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=3 * 1024**3, total=80 * 1024**3)

    def nvmlDeviceGetPowerUsage(self, h):
        return 312_500

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700_000

    def nvmlDeviceGetTemperature(self, h, sensor):
        raise FakeNVMLError("Not Supported")

    def nvmlDeviceGetClockInfo(self, h, kind):
        return {1: 1980, 2: 3201}[kind]

    def nvmlDeviceGetPcieThroughput(self, h, counter):
        return {0: 100, 1: 2000}[counter]  # KB/s

    def nvmlDeviceGetNvLinkState(self, h, link):
        if h == "h1":
            raise FakeNVMLError("Not Supported")
        return 1 if link < 2 else 0

    def nvmlDeviceGetFieldValues(self, h, fields):
        self.kib += 1000
        return [
            SimpleNamespace(nvmlReturn=0, valueType=3, value=SimpleNamespace(ullVal=self.kib)) for _ in fields
        ]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return 0x4 | 0x40

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [SimpleNamespace(pid=os.getpid(), usedGpuMemory=5 * 1024**2)] if h == "h0" else []


@pytest.fixture
def fake_nvml(monkeypatch):
    fake = FakePynvml()
    monkeypatch.setattr(nvml, "init", lambda: fake)
    return fake


def test_a_failing_nvml_call_leaves_the_other_metrics(fake_nvml):
    sampler = Sampler(interval_s=0.1)
    assert sampler.gpu_count == 2 and sampler.gpu_unavailable_reason is None
    names = sampler.metric_names()
    for suffix in ("util_percent", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "throttle_reasons"):
        assert f"gpu1_{suffix}" in names
    sampler.sample_once()
    time.sleep(0.05)
    s = sampler.sample_once()
    assert s["gpu0_temp_c"] is None  # the raising call
    assert s["gpu0_util_percent"] == 87 and s["gpu0_mem_util_percent"] == 41
    assert s["gpu0_vram_used_bytes"] == 3 * 1024**3
    assert s["gpu0_power_w"] == pytest.approx(312.5) and s["gpu0_power_limit_w"] == 700
    assert s["gpu0_sm_clock_mhz"] == 1980 and s["gpu0_mem_clock_mhz"] == 3201
    assert s["gpu0_pcie_rx_bytes_per_s"] == 2000 * 1024 and s["gpu0_pcie_tx_bytes_per_s"] == 100 * 1024
    assert s["gpu0_nvlink_rx_bytes_per_s"] > 0 and s["gpu0_nvlink_tx_bytes_per_s"] > 0
    assert s["gpu1_nvlink_rx_bytes_per_s"] is None  # no NVLink on that one
    assert s["gpu0_throttle_reasons"] == 0x44
    assert s["gpu0_throttle_reason_names"] == ["SwPowerCap", "HwThermalSlowdown"]
    assert s["cpu_percent"] is not None  # host side unaffected
    procs = sampler.gpu_processes()
    assert procs == [{"gpu": 0, "pid": os.getpid(), "name": procs[0]["name"], "used_bytes": 5 * 1024**2}]
    assert procs[0]["name"]
    _, h = sampler.history()
    assert np.isnan(h["gpu0_temp_c"]).all() and not np.isnan(h["gpu0_util_percent"]).any()
    seed = sampler.summary_for_result()["seed"]
    assert seed["gpu_util_percent"]["mean"] == 87 and len(seed["gpu_util_percent"]["per_gpu"]) == 2


def test_no_gpu_gives_a_reason_and_no_gpu_metrics(monkeypatch):
    def fail():
        raise nvml.NvmlUnavailable("NVML could not start: test says no driver")

    monkeypatch.setattr(nvml, "init", fail)
    sampler = Sampler()
    assert sampler.gpu_count == 0
    assert "test says no driver" in sampler.gpu_unavailable_reason
    assert not any(n.startswith("gpu") for n in sampler.metric_names())
    sampler.sample_once()
    result = sampler.summary_for_result()
    assert result["seed"]["gpu_util_percent"]["mean"] is None
    assert "test says no driver" in result["seed"]["gpu_util_percent"]["reason"]


def test_decode_throttle_reasons():
    assert decode_throttle_reasons(0) == []
    assert decode_throttle_reasons(None) is None
    assert decode_throttle_reasons(float("nan")) is None
    assert decode_throttle_reasons(0x1 | 0x8 | 0x10000) == ["GpuIdle", "HwSlowdown", "0x10000"]


# -- ring, summary, CSV --------------------------------------------------------------------


def test_ring_wraps_without_growing():
    ring = RingBuffer(2, 5)
    nbytes = ring.nbytes
    for i in range(13):
        ring.append(float(i), np.array([i, -i], dtype=float))
    assert len(ring) == 5 and ring.capacity == 5 and ring.nbytes == nbytes
    t, v = ring.window()
    assert t.tolist() == [8, 9, 10, 11, 12]
    assert v[1].tolist() == [-8, -9, -10, -11, -12]
    t, v = ring.window(since=9.5, until=11, rows=[0])
    assert t.tolist() == [10, 11] and v.tolist() == [[10, 11]]


def test_sampler_history_is_bounded():
    sampler = Sampler(interval_s=0.1, history_s=1.0)
    capacity, nbytes = sampler.capacity, sampler._ring.nbytes
    for _ in range(capacity * 3):
        sampler.sample_once()
    t, values = sampler.history()
    assert len(t) == capacity and sampler._ring.nbytes == nbytes
    assert np.all(np.diff(t) > 0)
    # 30 min at 10 Hz must fit the default history.
    assert Sampler(interval_s=0.1).capacity >= 18000


def test_summary_on_known_values():
    values = {"a": np.array([1.0, np.nan, 3.0, 5.0]), "b": np.full(4, np.nan)}
    s = summarize(values)
    assert s["a"] == {"mean": 3.0, "min": 1.0, "max": 5.0, "count": 3}
    assert s["b"] == {"mean": None, "min": None, "max": None, "count": 0}


def test_sampler_summary_window():
    sampler = Sampler(interval_s=0.1, history_s=10)
    names = sampler.metric_names()
    i = names.index("cpu_percent")
    for k in range(10):
        row = np.full(len(names), np.nan)
        row[i] = 10.0 * k
        sampler._ring.append(1000.0 + k, row)
    s = sampler.summary(since=1002.0, until=1005.0)["cpu_percent"]
    assert s == {"mean": 35.0, "min": 20.0, "max": 50.0, "count": 4}
    assert sampler.summary()["ram_used_bytes"]["count"] == 0
    r = sampler.summary_for_result(since=1002.0, until=1005.0)
    assert r["samples"] == 4 and r["interval_s"] == 0.1
    assert r["seed"]["cpu_util_percent"] == {"mean": 35.0, "max": 50.0}
    assert r["seed"]["ram_used_bytes"]["mean"] is None and "reason" in r["seed"]["ram_used_bytes"]


def test_csv_format_and_round_trip(tmp_path):
    sampler = Sampler(interval_s=0.1, history_s=10)
    for _ in range(4):
        sampler.sample_once()
        time.sleep(0.01)
    path = sampler.write_csv(tmp_path / "t.csv")
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["timestamp", *sampler.metric_names()]
    assert len(rows) == 5
    stamps = [float(r[0]) for r in rows[1:]]
    assert stamps == sorted(stamps) and abs(stamps[-1] - time.time()) < 60
    col = rows[0].index("proc_cpu_percent")
    assert all(r[col] == "" for r in rows[1:])  # N/A is an empty cell
    assert rows[1][rows[0].index("cpu_percent")] == ""  # first sample: no rate yet
    t, values = read_csv(path)
    t0, h = sampler.history()
    assert np.allclose(t, t0, atol=1e-3)
    assert np.allclose(values["ram_used_bytes"], h["ram_used_bytes"])
    assert np.isnan(values["proc_rss_bytes"]).all()


def test_read_csv_skips_a_cut_off_last_row(tmp_path):
    path = tmp_path / "cut.csv"
    path.write_text("timestamp,cpu_percent,ram_used_bytes\n1.0,5,100\n2.0,6,200\n3.0,7")
    t, values = read_csv(path)
    assert t.tolist() == [1.0, 2.0] and values["cpu_percent"].tolist() == [5, 6]


# -- the CLI ----------------------------------------------------------------------------------


def _cli(args, timeout=60):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "hwbench_gui.commands.monitor", *args],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
    )


def test_monitor_cli_writes_a_csv(tmp_path):
    out = tmp_path / "mon.csv"
    proc = _cli(["--interval", "0.1", "--duration", "1.5", "--csv", str(out)])
    assert proc.returncode == 0, proc.stderr
    t, values = read_csv(out)
    assert len(t) >= 5 and np.all(np.diff(t) > 0)
    assert "cpu_percent" in values and not np.isnan(values["ram_used_bytes"]).any()
    assert "samples written" in proc.stderr


def test_monitor_cli_prints_lines_and_summary():
    proc = _cli(["--interval", "0.2", "--duration", "1.1", "--summary"])
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if " cpu " in line]
    assert len(lines) >= 3
    assert '"samples"' in proc.stdout and '"seed"' in proc.stdout


def test_monitor_cli_rejects_a_bad_interval():
    proc = _cli(["--interval", "0.01", "--duration", "1"])
    assert proc.returncode == 2 and "interval" in proc.stderr
