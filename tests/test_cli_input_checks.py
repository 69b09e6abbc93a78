"""Input the CLI refuses in one line before any work (exit 2), and paths read as a shell user means them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _cli(args, env=None, cwd=None, timeout=120):
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), full_env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "hwbench_gui.cli", *args], env=full_env, cwd=cwd or REPO_ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (["run", "host.membw", "--timeout", "nan"], "argument --timeout: expected a finite number, got 'nan'"),
    (["run", "host.membw", "--timeout", "-5"], "argument --timeout: must be positive, got -5"),
    (["monitor", "--duration", "nan"], "argument --duration: expected a finite number, got 'nan'"),
    (["monitor", "--duration", "inf"], "argument --duration: expected a finite number, got 'inf'"),
    (["demo", "track", "--source", "v.mp4", "--out", "t.txt", "--size", "0"], "argument --size: must be at least 32"),
    (["demo", "track", "--source", "v.mp4", "--out", "t.txt", "--size", "-32"], "argument --size: must be at least 32"),
    (["demo", "track", "--source", "v.mp4", "--out", "t.txt", "--size", "100"], "must be a multiple of 32, got 100"),
    (["demo", "track", "--source", "v.mp4", "--out", "t.txt", "--conf", "1.5"], "--conf: must be between 0 and 1"),
    (["demo", "track", "--source", "v.mp4", "--out", "t.txt", "--max-frames", "0"], "--max-frames: must be at least 1"),
    (["demo", "snake", "train", "--minutes", "0", "--out", "s.pt"], "argument --minutes: must be positive, got 0"),
    (["demo", "snake", "train", "--minutes", "-1", "--out", "s.pt"], "argument --minutes: must be positive, got -1"),
    (["demo", "snake", "train", "--minutes", "nan", "--out", "s.pt"], "--minutes: expected a finite number, got 'nan'"),
    (["demo", "snake", "train", "--board", "2", "--out", "s.pt"], "argument --board: must be at least 4, got 2"),
])
def test_bad_numbers_are_one_line_before_any_work(tmp_path, args, message):
    proc = _cli(args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []  # nothing was started


def test_an_output_that_is_a_folder_or_under_a_missing_one_is_refused_at_once(tmp_path):
    proc = _cli(["demo", "track", "--source", "v.mp4", "--out", str(tmp_path)])
    assert proc.returncode == 2 and f"argument --out: {tmp_path} is a folder; give a file name" in proc.stderr
    proc = _cli(["demo", "snake", "train", "--minutes", "60", "--out", str(tmp_path / "missing" / "s.pt")])
    assert proc.returncode == 2 and f"the folder {tmp_path / 'missing'} does not exist" in proc.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no file can be made")
def test_an_output_folder_that_refuses_files_is_found_before_the_work(tmp_path):
    """A folder that permission bits would allow but that refuses files (/proc, a read-only mount; root
    passes os.access on both): refused in one line at once, not a traceback after the whole training."""
    proc = _cli(["demo", "snake", "train", "--minutes", "60", "--out", "/proc/hwbench-snake.pt"], cwd=tmp_path)
    assert proc.returncode == 2 and "argument --out: the folder /proc cannot be written" in proc.stderr
    assert "Traceback" not in proc.stderr and os.listdir(tmp_path) == []


def test_a_tilde_in_the_results_folder_is_the_home_folder(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path / "home"), HWBENCH_RESULTS_DIR="~/results")
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    proc = _cli(["demo", "snake", "eval", "--episodes", "1"], env=env, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "home" / "results").glob("*.json"))) == 1
    assert os.listdir(work) == []  # no literal ./~ folder
    proc = _cli(["demo", "snake", "eval", "--episodes", "1", "--results-dir", "~/other"], env=env, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "home" / "other").glob("*.json"))) == 1


def test_without_platformdirs_a_demo_says_so_in_one_line_before_it_runs(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "platformdirs.py").write_text("raise ImportError('No module named platformdirs')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("HWBENCH_RESULTS_DIR", "HWBENCH_DATA_DIR")}
    env["PYTHONPATH"] = str(blocker)
    proc = _cli(["demo", "snake", "eval", "--episodes", "1"], env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert "platformdirs is not installed (pip install platformdirs)" in proc.stderr
    assert "greedy play" not in proc.stdout  # refused before the games, not after them
    assert "Traceback" not in proc.stderr
    # where the user names the folder, the demo runs and its document is saved
    proc = _cli(["demo", "snake", "eval", "--episodes", "1", "--results-dir", str(tmp_path / "r")], env=env,
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "r").glob("*.json"))) == 1
