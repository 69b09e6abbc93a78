"""A benchmark's processes end with the CLI that started them: SIGKILLed, finished or cancelled, nothing
of its group stays behind, and a cancelled decode pool goes without tracebacks or leak warnings."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time

import psutil
import pytest
from support import REPO_ROOT, alive


posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and file-size limits")
needs_dev_full = pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                                    reason="no /dev/full character device here")


def _assert_gone_soon(pids: list[int], within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    for pid in pids:
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), f"pid {pid} outlived the killed CLI"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkilled_cli_takes_the_worker_and_its_decode_pool_along(env, tmp_path):
    pytest.importorskip("cv2")
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "cpu.decode", "-p", "workers=2",
                             "-p", "count=2", "-p", "image_size=32", "-p", "repeats=100", "-p", "repeat_s=30",
                             "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        worker_pid = int(re.search(r"running cpu\.decode \(pid (\d+)", line).group(1))
        deadline = time.monotonic() + 60
        pool: list[int] = []
        while time.monotonic() < deadline:
            pool = [p.pid for p in psutil.Process(worker_pid).children()
                    if "spawn_main" in " ".join(p.cmdline())]
            if len(pool) == 2:
                break
            time.sleep(0.1)
        assert len(pool) == 2, "the decode pool did not start"
        time.sleep(0.5)  # the pool workers are past their initializer
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone_soon([worker_pid, *pool])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the group guard is Linux's")
def test_sigkilled_cli_takes_what_the_benchmark_started_itself_along(env, tmp_path):
    """test.slow starts a plain ``sleep 60`` that knows nothing of hwbench: it must not outlive the CLI."""
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "test.slow", "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sleeper = None
    try:
        worker_pid = int(re.search(r"\(pid (\d+)", proc.stderr.readline()).group(1))
        deadline = time.monotonic() + 60
        while sleeper is None and time.monotonic() < deadline:
            sleeper = next((p for p in psutil.Process(worker_pid).children() if p.name() == "sleep"), None)
            time.sleep(0.05)
        assert sleeper is not None, "the benchmark did not start its sleep"
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone_soon([worker_pid, sleeper.pid])


def test_a_finished_run_leaves_no_process_of_its_group_behind(tmp_path, fixture_benchmarks):
    """The guard ends with its worker; the runner's pipes close when the worker ends, not later."""
    from hwbench_gui.engine.run import runner

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    result = runner.run_benchmark("test.ok", {"samples": [1, 2, 3]}, results_dir=tmp_path, timeout_s=60)
    assert result.status == "ok"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and alive(p.pid)]
        if not left:
            break
        time.sleep(0.05)
    assert not left, [p.cmdline() for p in left]


@posix_only
def test_cancelled_decode_run_logs_no_tracebacks_or_leak_warnings(env, tmp_path):
    pytest.importorskip("cv2")
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "cpu.decode", "-p", "workers=2",
                             "-p", "count=2", "-p", "image_size=32", "-p", "repeats=100", "-p", "repeat_s=30",
                             "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        worker_pid = int(re.search(r"\(pid (\d+)", proc.stderr.readline()).group(1))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(psutil.Process(worker_pid).children()) < 3:
            time.sleep(0.1)
        time.sleep(1.0)  # pool started and decoding
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    for noise in ("Traceback", "BrokenPipeError", "leaked semaphore", "resource_tracker"):
        assert noise not in stderr, stderr
    (file,) = tmp_path.glob("*.json")
    doc = json.loads(file.read_text())
    assert doc["status"] == "cancelled"
    assert not any(noise in line for line in doc["log_tail"] for noise in ("Traceback", "leaked"))
