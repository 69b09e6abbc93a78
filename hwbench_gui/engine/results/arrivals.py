"""Result documents that arrive in a results folder while a window shows it (``hwbench run`` in a terminal
beside the window writes there): each look lists the folder's ``*.json`` names with their sizes and change
times, nothing more, and only files new or changed since the last look are loaded (through
:func:`~hwbench_gui.engine.results.library.load_document`, checked like every listed file).

Plain Python, no Qt: the window decides when to look (a file-system watch and a slow timer) and where the
loading runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from hwbench_gui.engine.results.library import Library, load_document
from hwbench_gui.engine.results.store import ResultFileError

#: (size in bytes, change time in ns) of a file at the last look.
Stamp = tuple[int, int]


def listing(folder: str | os.PathLike) -> dict[str, Stamp]:
    """The folder's own result files (not hidden: the atomic writer's temporaries and the trash are) with their
    stamps; {} for a folder that cannot be listed (missing, not a folder, no permission)."""
    found: dict[str, Stamp] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".json") or entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found[entry.name] = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        return {}
    return found


class Arrivals:
    """What changed in ``folder`` since the last look. Create it before the folder is first listed in full,
    so that a file written between the two is not missed (it may then be reported once more; the views keep
    one row per file)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self._seen = listing(self.folder)

    def changed(self) -> list[Path]:
        """Files new or rewritten since the last look (oldest name first); the look becomes the last one."""
        now = listing(self.folder)
        new = sorted(name for name, stamp in now.items() if self._seen.get(name) != stamp)
        self._seen = now
        return [self.folder / name for name in new]

    @staticmethod
    def load(paths: list[Path]) -> Library:
        """Each of ``paths`` loaded and checked; a file that fails is in ``errors`` with its reason."""
        loaded = Library([], [])
        for path in paths:
            try:
                loaded.docs.append(load_document(path))
            except ResultFileError as exc:
                loaded.errors.append(exc)
        return loaded
