"""File-system facts a read measurement depends on: which mount holds a folder, whether its page
cache can be dropped, and which file systems make 'cache bypassed' a lie (RAM- or layer-backed)."""

from __future__ import annotations

import os
from typing import Sequence

RAM_FILESYSTEMS = {"tmpfs", "ramfs", "devtmpfs"}
LAYERED_FILESYSTEMS = {"overlay", "overlayfs", "aufs", "fuse-overlayfs"}


def filesystem_of(folder: str) -> tuple[str, str, str]:
    """(mountpoint, fstype, device) of the mount that holds ``folder``; empty strings if unknown."""
    import psutil

    real = os.path.realpath(folder)
    best = ("", "", "")
    for part in psutil.disk_partitions(all=True):
        mount = part.mountpoint
        inside = real == mount or real.startswith(mount.rstrip(os.sep) + os.sep)
        if inside and len(mount) >= len(best[0]):
            best = (mount, part.fstype, part.device)
    return best


def drop_page_cache(paths: Sequence[str], *, sync: bool = False) -> bool:
    """Ask the kernel to forget the files' cached pages; False where the OS has no fadvise.

    ``sync=True`` flushes each file first: dirty pages (a file just written) are not dropped.
    """
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            if sync:
                os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True
