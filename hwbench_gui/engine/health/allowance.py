"""How much more memory this process may allocate: the smallest of the host's available RAM, the address
space and data segment its resource limits leave (``ulimit -v`` and ``ulimit -d``), and what its control
group's memory limit leaves. A test sized from the host's free RAM alone asks for more than a limited process
may have; its allocation fails and a healthy machine reads FAIL.

:func:`allowance` names the limit that binds, so a run says what its size was taken from.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import NamedTuple

import psutil

from hwbench_gui.engine.foreign import ForeignFileError, read_regular

#: A control group file holds one number or a line of them: a bigger one is not one.
_CGROUP_FILE_BYTES = 4096
#: cgroup v1 writes "no limit" as a page-rounded 2**63 - 1.
_NO_LIMIT = 1 << 62


class Allowance(NamedTuple):
    bytes: int
    #: What bound it: "available RAM", "RLIMIT_AS (ulimit -v)", "RLIMIT_DATA (ulimit -d)" or "cgroup memory limit".
    source: str


def allowance(cgroup_root: str | os.PathLike = "/sys/fs/cgroup", proc_self: str | os.PathLike = "/proc/self"
              ) -> Allowance:
    """The bytes this process may still allocate and what bound them (see the module)."""
    found = [Allowance(int(psutil.virtual_memory().available), "available RAM")]
    me = psutil.Process().memory_info()
    for limit, used, name in ((resource.RLIMIT_AS, me.vms, "RLIMIT_AS (ulimit -v)"),
                              (resource.RLIMIT_DATA, getattr(me, "data", me.vms), "RLIMIT_DATA (ulimit -d)")):
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            found.append(Allowance(max(0, soft - used), name))
    left = cgroup_left(Path(cgroup_root), Path(proc_self))
    if left is not None:
        found.append(Allowance(left, "cgroup memory limit"))
    return min(found, key=lambda a: a.bytes)


def cgroup_left(root: Path, proc_self: Path) -> int | None:
    """What the tightest memory limit of this process's control group (v2 or v1) leaves, or None without one."""
    try:
        lines = read_regular(proc_self / "cgroup", _CGROUP_FILE_BYTES, "a cgroup list").decode().splitlines()
    except (ForeignFileError, UnicodeDecodeError):
        return None
    lefts = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: one hierarchy
            pairs = [(root, "memory.max", "memory.current")]
        elif "memory" in controllers.split(","):
            pairs = [(root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes")]
        else:
            continue
        for base, limit_name, usage_name in pairs:
            # the group's own folder, and the mount itself (a container sees its group as the root)
            for folder in {base / path.lstrip("/"), base}:
                limit, usage = _number(folder / limit_name), _number(folder / usage_name)
                if limit is not None and usage is not None and limit < _NO_LIMIT:
                    lefts.append(max(0, limit - usage))
    return min(lefts) if lefts else None


def _number(path: Path) -> int | None:
    try:
        text = read_regular(path, _CGROUP_FILE_BYTES, "a cgroup file").decode().strip()
    except (ForeignFileError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # "max" (v2) is no limit
