"""How many bytes this process may still allocate, and what limits it: checked against an estimate before a run
allocates anything, so that what cannot fit is refused with the arithmetic instead of reaching the allocator
(``DefaultCPUAllocator: can't allocate``) or the kernel's out-of-memory killer."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Any

GIB = 1 << 30


@dataclass(frozen=True)
class Room:
    """``bytes`` this process may allocate, and ``what`` limits it, in words with units."""

    bytes: int
    what: str


def host_room() -> Room:
    """The RAM the system reports available (psutil), or, where smaller, what the address-space limit
    (RLIMIT_AS, ``ulimit -v``) leaves beside the address space this process already maps."""
    import psutil

    available = int(psutil.virtual_memory().available)
    room = Room(available, f"{available / GIB:.1f} GiB of RAM available")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft > 0:
        mapped = int(psutil.Process().memory_info().vms)
        left = max(0, soft - mapped)
        if left < room.bytes:
            room = Room(left, f"{left / GIB:.1f} GiB left of the {soft / GIB:.1f} GiB address-space limit "
                              f"(RLIMIT_AS, ulimit -v; the process maps {mapped / GIB:.1f} GiB already)")
    return room


def gpu_room(torch: Any, index: int) -> Room:
    """The memory CUDA reports free on GPU ``index`` (its context already made)."""
    free, total = torch.cuda.mem_get_info(index)
    return Room(int(free), f"{free / GIB:.1f} GiB free of GPU {index}'s {total / GIB:.1f} GiB")
