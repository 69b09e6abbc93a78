"""How hwbench starts a child of itself: the entry flags, the worker's command line, its environment.

One program is the GUI, the CLI (``cli``), the benchmark worker, the torch probe and the self-test;
the flags here select which, and ``hwbench_gui/__main__.py`` is the one place that dispatches on them.
A PyInstaller build has no ``python -m``: there a child is ``sys.executable FLAG ...``.
"""

from __future__ import annotations

import json
import os
import site
import sys
from pathlib import Path
from typing import Any

from hwbench_gui.engine import lifeline
from hwbench_gui.engine.jsonable import jsonable

WORKER_FLAG = "--hwbench-worker"
TORCH_PROBE_FLAG = "--hwbench-torch-probe"
SELF_TEST_FLAG = "--self-test"
#: ``hwbench-gui cli ...`` (frozen build) is ``hwbench ...``.
CLI_WORD = "cli"
#: The run's time limit in seconds, as the parent will enforce it: a benchmark that estimates its own duration
#: refuses up front what would outlast it (:func:`run_time_limit_s`).
TIME_LIMIT_ENV = "HWBENCH_RUN_TIME_LIMIT_S"
#: Warning filter (``-W`` syntax) for the resource tracker's "leaked semaphore objects" notice.
_TRACKER_WARNING = "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker"


def frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def worker_command(spec: dict[str, Any] | None = None) -> list[str]:
    """The command line of a benchmark child; with ``spec`` the JSON run spec is appended."""
    command = [sys.executable, WORKER_FLAG] if frozen() else [sys.executable, "-m", "hwbench_gui", WORKER_FLAG]
    if spec is not None:
        command.append(json.dumps(jsonable(spec), allow_nan=False))
    return command


def child_env(time_limit_s: float | None = None) -> dict[str, str]:
    """The child's environment: ours (so ``$HWBENCH_EXTRA_BENCHMARKS`` etc. carry over), unbuffered,
    UTF-8, and able to import hwbench_gui when it is used from a source tree; it names this process
    as the parent the child dies with (:mod:`~hwbench_gui.engine.lifeline`) and, given one, the time limit
    the parent will stop it at (:data:`TIME_LIMIT_ENV`)."""
    env = dict(os.environ)
    if time_limit_s is not None:
        env[TIME_LIMIT_ENV] = repr(float(time_limit_s))
    env[lifeline.PARENT_ENV] = str(os.getpid())
    # A process pool whose owner was killed leaves its semaphores to multiprocessing's resource
    # tracker, which removes them and warns; after a kill that is expected, not a leak to report.
    env["PYTHONWARNINGS"] = ",".join(w for w in [env.get("PYTHONWARNINGS"), _TRACKER_WARNING] if w)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONIOENCODING", "utf-8")
    if not frozen():
        root = str(Path(__file__).resolve().parents[2])
        on_path = {os.path.abspath(p or os.getcwd()) for p in sys.path}
        site_dirs = {os.path.abspath(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
        if root in on_path and root not in site_dirs:
            env["PYTHONPATH"] = os.pathsep.join(p for p in [root, env.get("PYTHONPATH", "")] if p)
    return env


def run_time_limit_s() -> float | None:
    """The time limit (seconds) the parent set for this run (:data:`TIME_LIMIT_ENV`); None when it set none or
    the value is not a positive number."""
    try:
        value = float(os.environ.get(TIME_LIMIT_ENV, ""))
    except ValueError:
        return None
    return value if value > 0 and value == value and value != float("inf") else None
