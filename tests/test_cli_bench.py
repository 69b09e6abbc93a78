"""``hwbench list`` / ``hwbench run`` end to end, as real subprocesses with fixture benchmarks."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import REPO_ROOT, run_cli

TESTS_DIR = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fixtures use POSIX signals")


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_list_json(env):
    proc = run_cli(["list", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    rows = {row["id"] or row["module"]: row for row in json.loads(proc.stdout)}
    assert rows["test.ok"]["available"] is True and rows["test.ok"]["reason"] is None
    assert [p["name"] for p in rows["test.ok"]["params"]] == ["samples", "scale"]
    assert rows["test.needs_unknown"]["available"] is False
    assert "unknown requirement" in rows["test.needs_unknown"]["reason"]
    for row in rows.values():  # broken built-in modules are listed with a reason, not a crash
        assert row["available"] or row["reason"]


def test_list_table(env):
    proc = run_cli(["list", "--params"], env)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("test.self_unavailable"))
    assert re.search(r"\bno\s+fixture availability says no$", line)
    assert "--param scale=...  float, default 1.0, range 0.0..100.0" in proc.stdout


def test_run_ok_json(env, tmp_path):
    proc = run_cli(["run", "test.ok", "--param", "samples=1,2,3,4", "-p", "scale=2", "--out", str(tmp_path),
                    "--json"], env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok" and doc["params"] == {"samples": [1, 2, 3, 4], "scale": 2.0}
    assert doc["figure"]["value"] == 5.0 and doc["stats"]["p5"] == pytest.approx(2.3)
    files = _files(tmp_path)
    assert len(files) == 1 and json.loads(files[0].read_text()) == doc
    assert "test.ok: value = 5 units (median of 4; p5 2.3, p95 7.7; FP32)" in proc.stderr
    assert "test.ok [100.0%] repeat 4" in proc.stderr  # plain progress lines: stderr is not a TTY


def test_run_prints_the_path_and_quiet_is_quiet(env, tmp_path):
    proc = run_cli(["run", "test.ok", "-p", "samples=3", "--out", str(tmp_path), "--quiet"], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(_files(tmp_path)[0])
    assert proc.stderr == ""


def test_results_dir_from_environment(env, tmp_path):
    env["HWBENCH_RESULTS_DIR"] = str(tmp_path / "from-env")
    proc = run_cli(["run", "test.ok", "-p", "samples=3", "-q"], env)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).parent == tmp_path / "from-env"


@pytest.mark.parametrize("bench_id, reason", [
    ("test.raises", "RuntimeError: boom from the fixture"),
    ("test.segfault", "killed by SIGSEGV"),
])
def test_run_failed(env, tmp_path, bench_id, reason):
    proc = run_cli(["run", bench_id, "--out", str(tmp_path)], env)
    assert proc.returncode == 1
    assert f"{bench_id} failed" in proc.stderr and reason in proc.stderr
    (file,) = _files(tmp_path)
    assert proc.stdout.strip() == str(file)
    assert json.loads(file.read_text())["status"] == "failed"


def test_run_timeout_flag(env, tmp_path):
    proc = run_cli(["run", "test.slow", "--timeout", "0.5", "--out", str(tmp_path), "--json"], env)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["error_kind"] == "timeout" and doc["timeout_s"] == 0.5


@pytest.mark.parametrize("args, message", [
    (["run", "test.nope"], "no benchmark 'test.nope'; known:"),
    (["run", "test.ok", "--param", "scale=-1"], "below the minimum"),
    (["run", "test.ok", "--param", "bogus=1"], "no parameter bogus"),
    (["run", "test.ok", "--param", "scale"], "is not NAME=VALUE"),
    (["run", "test.ok", "--param", "scale=1", "--param", "scale=2"], "given twice"),
    (["run", "test.ok", "--timeout", "0"], "argument --timeout: must be positive, got 0"),
    (["run", "test.ok", "--timeout", "nan"], "argument --timeout: expected a finite number, got 'nan'"),
])
def test_run_usage_errors(env, tmp_path, args, message):
    proc = run_cli([*args, "--out", str(tmp_path)], env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert _files(tmp_path) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_ctrl_c_sigterm_and_sighup_cancel_the_whole_run(env, tmp_path, sig):
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "test.slow", "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        for line in proc.stderr:  # the fixture reports its grandchild's pid as a metric
            seen.append(line)
            if line.startswith("grandchild_pid = "):
                break
        text = "".join(seen)
        worker_pid = int(re.search(r"running test\.slow \(pid (\d+)", text).group(1))
        grandchild_pid = int(re.search(r"grandchild_pid = (\d+)", text).group(1))
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, stderr  # as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM
    assert f"cancelling ({sig.name}" in stderr
    assert "hwbench run: cancelled" in stderr
    (file,) = _files(tmp_path)
    assert stdout.strip() == str(file)
    assert json.loads(file.read_text())["status"] == "cancelled"
    deadline = time.monotonic() + 5
    for pid in (worker_pid, grandchild_pid):
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"pid {pid} survived the cancel"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class _Terminal:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


def test_progress_is_one_updating_line_on_a_terminal():
    from hwbench_gui.commands.bench import ProgressDisplay

    terminal = _Terminal()
    display = ProgressDisplay("x.y", terminal)
    display.on_event({"type": "progress", "fraction": 0.5, "message": "half"})
    display.on_event({"type": "progress", "fraction": 1.0, "message": "done"})
    display.on_event({"type": "log", "message": "a log line"})
    display.finish()
    assert terminal.text == ("\rx.y [ 50.0%] half\x1b[K\rx.y [100.0%] done\x1b[K"
                             "\r\x1b[Ka log line\n")


def test_run_reads_a_byte_size_as_the_form_does(env, tmp_path):
    proc = run_cli(["run", "gpu.pcie", "-p", "min_bytes=64MiB", "-p", "max_bytes=64 MiB", "--json",
                    "--out", str(tmp_path)], env)
    assert "bad parameter" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)  # ran (or found no GPU) with the sizes read as the form reads them
    assert doc["params"]["min_bytes"] == doc["params"]["max_bytes"] == 64 * 2**20
    proc = run_cli(["run", "gpu.pcie", "-p", "min_bytes=17G", "--out", str(tmp_path / "refused")], env)
    assert proc.returncode == 2
    assert "min_bytes: 18253611008 is above the maximum 16 GiB" in proc.stderr
