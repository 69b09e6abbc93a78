"""Plain helpers the tests share (fixtures live in conftest.py; this module is imported, conftest never is)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = Path(__file__).resolve().parent
FIXTURES = TESTS_DIR / "fixtures"
FIXTURE_BENCHMARKS = "bench_fixtures.crashy"  # the fixture benchmarks' module, importable from TESTS_DIR


def run_cli(args, env, timeout=120, **kwargs):
    """``hwbench ARGS`` as a real subprocess of this interpreter, output captured as text."""
    return subprocess.run([sys.executable, "-m", "hwbench_gui.cli", *args], env=env, capture_output=True,
                          text=True, timeout=timeout, **kwargs)


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout


def one_line(text: str) -> str:
    """The only non-empty line of ``text`` (the assertion fails when there are more)."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class InProcessPool:
    """multiprocessing's Pool interface run in this process, so that calls made in "workers" can be counted."""

    def __init__(self, workers, initializer, initargs):
        self.workers = workers
        for _ in range(workers):
            initializer(*initargs)

    def map(self, func, items, chunksize=1):
        return [func(item) for item in items]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
