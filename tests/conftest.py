"""Test-wide setup: no display, no writes outside temporary folders."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from hwbench_gui.engine.run.registry import EXTRA_ENV  # light: imports no framework and no Qt

# Before anything imports Qt: CI has no display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from support import FIXTURE_BENCHMARKS, REPO_ROOT, TESTS_DIR  # noqa: E402 (pytest puts tests/ on sys.path)

# Tests of both frameworks share this process, and importing torch's compiler stack (triton) after
# TensorFlow 2.21 has loaded ends the process with a segmentation fault (torch 2.14's CUDA build); the other
# order is fine. hwbench itself never loads both in one process (each benchmark runs in its own child).
try:
    import torch._dynamo  # noqa: E402,F401
except ImportError:
    pass


@pytest.fixture(autouse=True, scope="session")
def _isolated_user_dirs(tmp_path_factory):
    """Results and data go to a temporary folder, never the developer's own."""
    data = tmp_path_factory.mktemp("hwbench-data")
    os.environ["HWBENCH_DATA_DIR"] = str(data)
    os.environ["HWBENCH_RESULTS_DIR"] = str(data / "results")
    yield


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """Once a test has brought Qt up, automatic garbage collection is off for the rest of the process (as in
    the window: hwbench_gui.ui.heap says why) and only Qt's timer collects, while an event loop turns; between
    tests the main thread collects what is due, so that tests with no event loop do not pile up garbage."""
    yield
    if not gc.isenabled():
        from hwbench_gui.ui import heap  # imports no Qt

        heap.collect_due()


@pytest.fixture
def qsettings(tmp_path):
    """A QSettings backed by a temporary INI file."""
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture
def demos_tab(qtbot, qsettings, tmp_path):
    """The Demos tab, shown offscreen at 1100×700 with results under tmp_path; its demos are shut down
    after, as the window does it (the pages abort their workers, then the workers are waited for)."""
    from hwbench_gui.ui.context import AppContext
    from hwbench_gui.ui.demos.tab import DemosTab

    context = AppContext(settings=qsettings, results_dir=Path(tmp_path))
    tab = DemosTab(context)
    qtbot.addWidget(tab)
    tab.resize(1100, 700)
    tab.show()
    yield tab
    tab.shutdown()
    assert not context.workers.shutdown(timeout_s=10), "a demo worker did not stop"


@pytest.fixture
def cli_env():
    """Environment for running the CLI as a real subprocess from the source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.fixture
def fixture_cli_env(cli_env):
    """``cli_env`` with the fixture benchmarks (tests/bench_fixtures/crashy.py) registered in the CLI and its
    children."""
    env = dict(cli_env)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS_DIR), env["PYTHONPATH"]])
    env[EXTRA_ENV] = FIXTURE_BENCHMARKS
    return env


@pytest.fixture
def fixture_benchmarks(monkeypatch):
    """The fixture benchmarks (tests/bench_fixtures/crashy.py), registered in this process and in every child
    process the runner starts."""
    monkeypatch.syspath_prepend(str(TESTS_DIR))
    monkeypatch.setenv(EXTRA_ENV, FIXTURE_BENCHMARKS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(TESTS_DIR), os.environ.get("PYTHONPATH")] if p))


@pytest.fixture
def env(fixture_cli_env):
    """The CLI tests' environment (fixture benchmarks included)."""
    return fixture_cli_env


@pytest.fixture
def blocker(tmp_path) -> Path:
    """A regular file: nothing can be created under it, not even by root."""
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path
