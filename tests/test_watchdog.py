"""The test run's watchdog (pyproject's faulthandler options) ends a test that hangs with the GIL held."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from support import REPO_ROOT


def test_a_test_that_hangs_holding_the_gil_ends_the_run_with_its_stack(tmp_path):
    (tmp_path / "test_stuck.py").write_text(textwrap.dedent("""
        import ctypes

        def test_stuck_in_c_with_the_gil():
            # libc's sleep through PyDLL keeps the GIL, as a Qt call waiting on a mutex did
            ctypes.PyDLL(None).sleep(60)
    """))
    start = time.monotonic()
    # the project's settings, with the watchdog's 600 s made 2 and pytest-timeout (which cannot help) off
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-o", "faulthandler_timeout=2", "-o", "timeout=0", str(tmp_path / "test_stuck.py")],
                          cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert time.monotonic() - start < 40
    assert done.returncode != 0
    assert "Timeout" in done.stderr and "test_stuck_in_c_with_the_gil" in done.stderr
