"""Children that die with their parent: a killed CLI or GUI must not leave a benchmark running.

A benchmark worker (and every process it starts for hwbench: the JPEG decode pool, data-loader
workers) calls :func:`die_with_parent` first thing, with the pid of the process that started it.
On Linux the kernel then sends SIGKILL when that parent dies (``PR_SET_PDEATHSIG``), also when the
parent was SIGKILLed itself or killed by the out-of-memory killer; elsewhere a watchdog thread
notices that the parent is gone and ends this process. The parent's pid is checked after the
request, so a parent that died before it is caught too.

The kernel's signal reaches only the worker. What a benchmark starts itself (a ``sleep``, a
tool, ranks) would be orphaned with it, so on Linux the worker also forks a small guard
(:func:`guard_group`) that kills the worker's whole process group the moment the worker ends.
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


def guard_group() -> int | None:
    """Linux: fork a guard that SIGKILLs this process group as soon as this process ends.

    Only for a group leader (the runner starts its worker in a session of its own), so the guard
    can never reach the CLI's or the GUI's group. The guard closes every inherited descriptor (the
    runner's pipes see EOF when the worker ends, not when the guard does) and ignores the runner's
    SIGTERM/SIGINT, so a cancelled worker still gets its grace period. Returns the guard's pid, or
    None where there is no guard (not Linux, not a group leader, fork refused).
    """
    if not sys.platform.startswith("linux") or os.getpgrp() != os.getpid():
        return None
    leader = os.getpid()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})  # before the fork: no death is missed
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        return pid if pid > 0 else None
    try:  # the guard: no Python exit path, whatever happens
        for fd in _open_descriptors():
            try:
                os.close(fd)
            except OSError:
                pass
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if _set_pdeathsig(signal.SIGUSR1) and os.getppid() == leader:
            signal.sigwait({signal.SIGUSR1})
        else:  # no death signal to wait for: look at the leader instead
            while os.getppid() == leader:
                time.sleep(WATCHDOG_INTERVAL_S)
        os.killpg(0, signal.SIGKILL)  # the group, this guard included
    finally:
        os._exit(0)


def _open_descriptors() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256)) + [0, 1, 2]


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
