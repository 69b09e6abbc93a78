"""Files written whole or not at all: a temporary file in the same folder, fsync, then a rename.

A crash, a full disk or a cancelled run leaves the earlier file (or none), never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
import uuid
from pathlib import Path
from typing import IO, Iterator


#: The temporary file :func:`atomic_open` writes beside its target: ``.<name>.<8 hex>.tmp``.
_TEMPORARY = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp$")
#: A write takes well under a second; a temporary file this old was left by a process killed mid-write.
STALE_AFTER_S = 600.0


def remove_stale_temporaries(folder: str | os.PathLike, older_than_s: float = STALE_AFTER_S) -> list[Path]:
    """Delete the temporary files a killed writer left in ``folder`` (regular files named as
    :func:`atomic_open` names them, untouched for ``older_than_s``); returns those removed."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMPORARY.match(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < older_than_s:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **open_kwargs) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces ``path``.

    ``mode`` is "w" (text, UTF-8 unless ``encoding`` is given) or "wb". On an exception the
    temporary file is removed and ``path`` is untouched. The file gets the user's usual
    permissions (umask), unlike ``mkstemp``'s 0600.

    A ``path`` that is a device or a pipe (``/dev/stdout``, ``/dev/null``) is written in place, never
    replaced by a file; a folder raises ``IsADirectoryError``, a path under a regular file
    ``NotADirectoryError``.
    """
    target = Path(path)
    try:
        mode_bits = os.stat(target).st_mode
    except OSError:
        mode_bits = None
    if mode_bits is not None and stat.S_ISDIR(mode_bits):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", str(target))
    if mode_bits is not None and not stat.S_ISREG(mode_bits):
        if "b" not in mode:
            open_kwargs.setdefault("encoding", "utf-8")
        with open(target, mode, **open_kwargs) as handle:
            yield handle
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a regular file where a folder of the path should be
        raise NotADirectoryError(errno.ENOTDIR, "a part of the path is a file, not a folder",
                                 exc.filename or str(target.parent)) from None
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    if "b" not in mode:
        open_kwargs.setdefault("encoding", "utf-8")
    try:
        with open(tmp, mode.replace("w", "x"), **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically; returns the path."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)
    return Path(path)


def write_error_text(path: str | os.PathLike, exc: OSError) -> str:
    """One line for a failed write: ``cannot write PATH: No space left on device``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = os.fspath(exc.filename) if exc.filename is not None else None
    if where and where != os.fspath(path) and not os.path.basename(where).startswith("."):  # not our temp file
        reason += f" ({where})"
    return f"cannot write {os.fspath(path)}: {reason}"
