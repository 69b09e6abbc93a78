"""Where hwbench reads its resources and writes its results."""

from __future__ import annotations

import os
import sys
from pathlib import Path

RESULTS_ENV = "HWBENCH_RESULTS_DIR"
DATA_ENV = "HWBENCH_DATA_DIR"


class NoUserFolders(RuntimeError):
    """The per-user folders cannot be named: platformdirs is missing (a source tree run without
    installing). The message says what to install or set instead."""


def _platformdirs():
    try:
        import platformdirs
    except ImportError:
        raise NoUserFolders(f"platformdirs is not installed (pip install platformdirs), so the user data folder "
                            f"is unknown; set {RESULTS_ENV} or name a folder (--out / --results-dir)") from None
    return platformdirs


def user_data_dir() -> Path:
    """Per-user data folder (``~/.local/share/hwbench`` on Linux); ``$HWBENCH_DATA_DIR`` overrides."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override).expanduser()
    return Path(_platformdirs().user_data_dir("hwbench", appauthor=False))


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Folder that holds result documents: ``override``, else ``$HWBENCH_RESULTS_DIR``, else the data dir.

    ``~`` means the home folder in both (a quoted ``~`` reaches us unexpanded)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env).expanduser()
    return user_data_dir() / "results"


def log_file_path() -> Path:
    """The window's log file: ``hwbench-gui.log`` in the user log folder (``~/.local/state/hwbench/log``
    on Linux)."""
    return Path(_platformdirs().user_log_dir("hwbench")) / "hwbench-gui.log"


def resources_dir() -> Path:
    """The shipped ``resources/`` folder: beside the package in a source tree or an editable install,
    inside it (``hwbench_gui/resources``) in an installed wheel, at the bundle root in a frozen build."""
    package = Path(__file__).resolve().parent.parent
    candidates = [package.parent / "resources", package / "resources"]
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidates.insert(0, Path(frozen_root) / "resources")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return candidates[0]
