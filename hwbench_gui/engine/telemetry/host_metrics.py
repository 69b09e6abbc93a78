"""Host CPU, memory and disk figures, and the CPU/RSS of one watched process tree (psutil).

Every reader fills a dict of flat metric names; a call that fails leaves its metrics ``None`` and
the others go on. Rates (CPU %, disk bytes/s) are deltas between two reads, so the first read only
primes them and reports ``None``.
"""

from __future__ import annotations

import os
import time
from typing import Any

import psutil

#: How often the CPU clock is re-read: on Linux psutil reads one sysfs file per core for it.
CPU_FREQ_REFRESH_S = 2.0
#: Without /proc/<pid>/task/<tid>/children, finding children means scanning every process in /proc:
#: done at most this often.
CHILD_SCAN_FALLBACK_S = 1.0


def _cpu_total_s(times) -> float:
    # guest time is already counted in user/nice on Linux (psutil subtracts it the same way).
    return sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)


def _cpu_busy_s(times) -> float:
    return _cpu_total_s(times) - times.idle - getattr(times, "iowait", 0.0)


class HostReader:
    """CPU total and per-core %, CPU clock, RAM and swap used, disk read/write bytes per second."""

    def __init__(self) -> None:
        self.n_cores = len(psutil.cpu_times(percpu=True))
        self.names = (
            ["cpu_percent"]
            + [f"cpu{i}_percent" for i in range(self.n_cores)]
            + [
                "cpu_freq_mhz",
                "ram_used_bytes",
                "swap_used_bytes",
                "disk_read_bytes_per_s",
                "disk_write_bytes_per_s",
            ]
        )
        self._prev_cpu: list | None = None
        self._prev_disk: tuple[float, int, int] | None = None
        self._freq_mhz: float | None = None
        self._freq_read_at = -1e9

    def read(self, now_s: float, out: dict[str, Any]) -> None:
        """Add this reader's metrics to ``out``; ``now_s`` is a monotonic clock reading."""
        self._read_cpu(out)
        self._read_freq(now_s, out)
        try:
            out["ram_used_bytes"] = float(psutil.virtual_memory().used)
        except Exception:
            out["ram_used_bytes"] = None
        out["swap_used_bytes"] = _swap_used_bytes()
        self._read_disk(now_s, out)

    def _read_cpu(self, out: dict[str, Any]) -> None:
        # Deltas of our own: psutil.cpu_percent() keeps one module-wide "last" state that any other
        # caller in the process (inventory, a test) would reset under us.
        for i in range(self.n_cores):
            out[f"cpu{i}_percent"] = None
        out["cpu_percent"] = None
        try:
            now = psutil.cpu_times(percpu=True)
        except Exception:
            self._prev_cpu = None
            return
        prev, self._prev_cpu = self._prev_cpu, now
        if prev is None or len(prev) != len(now):
            return
        busy_sum = total_sum = 0.0
        for i, (a, b) in enumerate(zip(prev, now)):
            total = _cpu_total_s(b) - _cpu_total_s(a)
            busy = _cpu_busy_s(b) - _cpu_busy_s(a)
            busy_sum += busy
            total_sum += total
            if i < self.n_cores:
                out[f"cpu{i}_percent"] = _percent(busy, total)
        out["cpu_percent"] = _percent(busy_sum, total_sum)

    def _read_freq(self, now_s: float, out: dict[str, Any]) -> None:
        if now_s - self._freq_read_at >= CPU_FREQ_REFRESH_S:
            self._freq_read_at = now_s
            try:
                freq = psutil.cpu_freq()
                self._freq_mhz = float(freq.current) if freq and freq.current else None
            except Exception:
                self._freq_mhz = None
        out["cpu_freq_mhz"] = self._freq_mhz

    def _read_disk(self, now_s: float, out: dict[str, Any]) -> None:
        out["disk_read_bytes_per_s"] = out["disk_write_bytes_per_s"] = None
        counters = _disk_bytes()
        if counters is None:  # no disks visible (some containers)
            self._prev_disk = None
            return
        prev, self._prev_disk = self._prev_disk, (now_s, *counters)
        if prev is None or now_s <= prev[0] or counters[0] < prev[1] or counters[1] < prev[2]:
            return
        dt = now_s - prev[0]
        out["disk_read_bytes_per_s"] = (counters[0] - prev[1]) / dt
        out["disk_write_bytes_per_s"] = (counters[1] - prev[2]) / dt


_physical_disks: tuple[float, frozenset[str]] = (-1e9, frozenset())


def _disk_bytes() -> tuple[int, int] | None:
    """Bytes read and written since boot, summed over physical disks.

    On Linux: /proc/diskstats, counting only block devices with a ``device`` link in /sys/block
    (real disks), so partitions, loop, zram, device-mapper and md devices do not count the same
    bytes twice. psutil elsewhere.
    """
    global _physical_disks
    if not os.path.exists("/proc/diskstats"):
        try:
            io = psutil.disk_io_counters(perdisk=False, nowrap=True)
        except Exception:
            return None
        return None if io is None else (io.read_bytes, io.write_bytes)
    now = time.monotonic()
    if now - _physical_disks[0] > 10.0:  # hot-plugged disks show up within 10 s
        try:
            names = frozenset(n for n in os.listdir("/sys/block") if os.path.exists(f"/sys/block/{n}/device"))
        except OSError:
            names = frozenset()
        _physical_disks = (now, names)
    disks = _physical_disks[1]
    read_sectors = written_sectors = 0
    found = False
    try:
        with open("/proc/diskstats", "rb") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) >= 10 and fields[2].decode() in disks:
                    read_sectors += int(fields[5])
                    written_sectors += int(fields[9])
                    found = True
    except (OSError, ValueError):
        return None
    # diskstats counts 512-byte sectors whatever the device's sector size.
    return (read_sectors * 512, written_sectors * 512) if found else None


def _swap_used_bytes() -> float | None:
    # psutil.swap_memory() also parses /proc/vmstat for swap-in/out counts we do not use: 3x the cost.
    if os.path.exists("/proc/meminfo"):
        total = free = None
        try:
            with open("/proc/meminfo", "rb") as fh:
                for line in fh:
                    if line.startswith(b"SwapTotal:"):
                        total = int(line.split()[1]) * 1024
                    elif line.startswith(b"SwapFree:"):
                        free = int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            return None
        return None if total is None or free is None else float(total - free)
    try:
        return float(psutil.swap_memory().used)
    except Exception:
        return None


def _percent(busy: float, total: float) -> float | None:
    if total <= 0:
        return None
    # Rounded: jiffy counters differenced as floats leave 1e-11 noise in an exact 0.
    return round(min(100.0, max(0.0, 100.0 * busy / total)), 3)


class ProcessTreeReader:
    """CPU percent (of one core, may exceed 100) and RSS summed over a pid and its descendants.

    The tree is looked up on every read from ``/proc/<pid>/task/<tid>/children`` of the watched
    processes only; kernels without that file fall back to psutil's scan of all processes, at most
    every :data:`CHILD_SCAN_FALLBACK_S`. RSS is summed, so pages shared between the processes count
    more than once (as ``top`` would show them).
    """

    #: ``self_cpu_percent``: this process (the app that samples). ``others_*`` are filled in by the
    #: sampler from the host figures: what processes outside the watched tree and the app used.
    names = ["proc_cpu_percent", "proc_rss_bytes", "self_cpu_percent", "others_cpu_percent", "others_gpu_processes"]

    def __init__(self) -> None:
        self._self = psutil.Process()
        self._self_prev: tuple[float, float] | None = None
        #: PIDs of the watched tree at the last read (empty when nothing is watched).
        self.tree_pids: frozenset[int] = frozenset()
        self._root: int | None = None
        self._procs: dict[int, psutil.Process] = {}
        self._prev_cpu_s: dict[int, float] = {}
        self._prev_wall: float | None = None
        self._prev_mono: float | None = None
        self._proc_children_ok: bool | None = None
        self._fallback_pids: set[int] = set()
        self._fallback_at = -1e9

    @property
    def pid(self) -> int | None:
        return self._root

    def watch(self, pid: int | None) -> None:
        """Follow ``pid`` and its descendants from the next read; ``None`` stops watching."""
        self._root = pid
        self._procs.clear()
        self._prev_cpu_s.clear()
        self._prev_wall = self._prev_mono = None
        self._fallback_pids = set()
        self._fallback_at = -1e9

    def read(self, now_s: float, out: dict[str, Any]) -> None:
        out["proc_cpu_percent"] = out["proc_rss_bytes"] = None
        out["others_cpu_percent"] = out["others_gpu_processes"] = None
        self._read_self(now_s, out)
        self.tree_pids = frozenset()
        root = self._root
        if root is None:
            return
        wall = time.time()
        pids = self._tree(root, now_s)
        if not pids:
            self._procs.clear()
            self._prev_cpu_s.clear()
            return
        cpu_delta_s = 0.0
        rss = 0
        cpu_now: dict[int, float] = {}
        for pid in pids:
            proc = self._procs.get(pid)
            try:
                if proc is None:
                    proc = self._procs[pid] = psutil.Process(pid)
                with proc.oneshot():
                    times = proc.cpu_times()
                    rss += proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                self._procs.pop(pid, None)
                continue
            # With the CPU of its reaped children: a pool worker that ends between two reads hands
            # its time to its parent's children_* counters (else it would look like someone else's).
            cpu_s = times.user + times.system + getattr(times, "children_user", 0.0) + \
                getattr(times, "children_system", 0.0)
            cpu_now[pid] = cpu_s
            if pid in self._prev_cpu_s:
                cpu_delta_s += cpu_s - self._prev_cpu_s[pid]
            elif self._prev_wall is not None and proc.create_time() >= self._prev_wall:
                cpu_delta_s += cpu_s  # born since the last read: all its CPU time is new
        for gone in set(self._prev_cpu_s) - set(cpu_now):
            # Counted up to the last read; its parent's children_* jump holds that part again.
            cpu_delta_s -= self._prev_cpu_s[gone]
        cpu_delta_s = max(0.0, cpu_delta_s)
        for gone in set(self._procs) - set(cpu_now):
            self._procs.pop(gone, None)
        if not cpu_now:
            return
        self.tree_pids = frozenset(cpu_now)
        out["proc_rss_bytes"] = float(rss)
        if self._prev_mono is not None and now_s > self._prev_mono:
            out["proc_cpu_percent"] = 100.0 * cpu_delta_s / (now_s - self._prev_mono)
        self._prev_cpu_s = cpu_now
        self._prev_wall, self._prev_mono = wall, now_s

    def _read_self(self, now_s: float, out: dict[str, Any]) -> None:
        out["self_cpu_percent"] = None
        try:
            times = self._self.cpu_times()
        except psutil.Error:
            return
        cpu_s = times.user + times.system
        prev, self._self_prev = self._self_prev, (now_s, cpu_s)
        if prev is not None and now_s > prev[0]:
            out["self_cpu_percent"] = 100.0 * max(0.0, cpu_s - prev[1]) / (now_s - prev[0])

    def _tree(self, root: int, now_s: float) -> list[int]:
        if not psutil.pid_exists(root):
            return []
        if self._proc_children_ok is None:
            self._proc_children_ok = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
        if self._proc_children_ok:
            return _tree_from_proc(root)
        if now_s - self._fallback_at >= CHILD_SCAN_FALLBACK_S:
            self._fallback_at = now_s
            try:
                kids = psutil.Process(root).children(recursive=True)
                self._fallback_pids = {p.pid for p in kids}
            except psutil.Error:
                self._fallback_pids = set()
        return [root, *sorted(self._fallback_pids)]


def _tree_from_proc(root: int) -> list[int]:
    """``root`` and its descendants read from /proc/<pid>/task/*/children (Linux, CONFIG_PROC_CHILDREN)."""
    seen = [root]
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            for child in data.split():
                c = int(child)
                if c not in seen:
                    seen.append(c)
                    stack.append(c)
    return seen
