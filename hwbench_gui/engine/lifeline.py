"""Children that die with their parent: a killed CLI or GUI must not leave a benchmark running.

A benchmark worker (and every process it starts for hwbench: the JPEG decode pool, data-loader
workers) calls :func:`die_with_parent` first thing, with the pid of the process that started it.
On Linux the kernel then sends SIGKILL when that parent dies (``PR_SET_PDEATHSIG``), also when the
parent was SIGKILLed itself or killed by the out-of-memory killer; elsewhere a watchdog thread
notices that the parent is gone and ends this process. The parent's pid is checked after the
request, so a parent that died before it is caught too.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: The environment variable through which the runner tells its worker its own pid.
PARENT_ENV = "HWBENCH_PARENT_PID"
#: How often the watchdog (not Linux) looks at the parent.
WATCHDOG_INTERVAL_S = 0.5
_PR_SET_PDEATHSIG = 1


def parent_from_env() -> int | None:
    """The pid in :data:`PARENT_ENV`, or None when unset or not a number."""
    try:
        return int(os.environ[PARENT_ENV])
    except (KeyError, ValueError):
        return None


def die_with_parent(parent_pid: int | None) -> str:
    """End this process when ``parent_pid`` (the process that started it) ends.

    Returns how: "pdeathsig", "watchdog", or "none" (no parent pid given, or it is this process:
    the worker's code run in-process, as tests do). If the parent is already gone, this process
    ends at once.
    """
    if not parent_pid or parent_pid == os.getpid():
        return "none"
    if sys.platform.startswith("linux") and _set_pdeathsig(signal.SIGKILL):
        if os.getppid() != parent_pid:  # the parent died before the request: we were reparented
            os.kill(os.getpid(), signal.SIGKILL)
        return "pdeathsig"
    thread = threading.Thread(target=_watch, args=(parent_pid,), name="hwbench-lifeline", daemon=True)
    thread.start()
    return "watchdog"


def _set_pdeathsig(sig: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parent_gone(parent_pid: int) -> bool:
    if os.name == "posix":
        return os.getppid() != parent_pid  # reparented to init or a subreaper
    try:
        import psutil

        return not psutil.pid_exists(parent_pid)
    except ImportError:
        return False


def _watch(parent_pid: int) -> None:
    while not _parent_gone(parent_pid):
        time.sleep(WATCHDOG_INTERVAL_S)
    _end_tree()


def _end_tree() -> None:
    """This process and everything it started, without waiting for anything."""
    try:
        import psutil

        for child in psutil.Process().children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                pass
    except Exception:  # psutil missing or the tree changing under us: our own exit still comes
        pass
    os._exit(1)
