"""Where a file dialog opens: the user's home folder, never the process's working folder.

A dialog given "" or a bare file name opens in the working folder, which for a window started from a
desktop entry or an install script is wherever that happened to be (the source tree, ``/``).
"""

from __future__ import annotations

from pathlib import Path


def start_path(name: str = "") -> str:
    """The home folder, with ``name`` as the suggested file when given."""
    return str(Path.home() / name) if name else str(Path.home())
