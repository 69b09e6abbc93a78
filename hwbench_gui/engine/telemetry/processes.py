"""The host processes using the most CPU (and their memory), as ``top`` lists them. No Qt.

CPU percentages are measured between two calls: :class:`TopProcesses` keeps psutil's process
objects from one call to the next, so call :meth:`TopProcesses.sample` at a steady, low rate
(every 1-3 s); its first call gives 0 % for every process.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import psutil


@dataclass(frozen=True)
class HostProcess:
    pid: int
    name: str
    user: str | None
    #: Percent of one core, as ``top`` shows it (a process on 4 busy cores shows 400).
    cpu_percent: float
    rss_bytes: int | None
    threads: int | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class TopProcesses:
    """Samples the processes with the highest CPU use; processes that vanish or deny access are skipped."""

    def __init__(self) -> None:
        self._procs: dict[int, psutil.Process] = {}

    def sample(self, limit: int = 10) -> list[HostProcess]:
        """The ``limit`` busiest processes since the previous call, busiest first (then by memory)."""
        seen: dict[int, psutil.Process] = {}
        rows: list[HostProcess] = []
        for proc in psutil.process_iter():
            proc = self._procs.get(proc.pid, proc)  # the same object, so cpu_percent measures an interval
            try:
                with proc.oneshot():
                    cpu = proc.cpu_percent(None)
                    name = proc.name()
                    memory = _or_none(lambda: proc.memory_info().rss)
                    user = _or_none(proc.username)
                    threads = _or_none(proc.num_threads)
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            except psutil.AccessDenied:
                continue
            seen[proc.pid] = proc
            rows.append(HostProcess(proc.pid, name, user, float(cpu), memory, threads))
        self._procs = seen
        rows.sort(key=lambda r: (-r.cpu_percent, -(r.rss_bytes or 0)))
        return rows[:limit]


def _or_none(getter):
    try:
        return getter()
    except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return None


def top_processes(limit: int = 10, sampler: TopProcesses | None = None) -> list[HostProcess]:
    """One sample of the busiest processes; pass the same ``sampler`` each time for real CPU figures."""
    return (sampler or TopProcesses()).sample(limit)
