"""Where a report may be written: never over one of its inputs, never over any result document."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from hwbench_gui.engine.results.store import ResultFileError, load_result


def refuse_to_overwrite(target: str | os.PathLike, docs: Sequence[dict[str, Any]]) -> str | None:
    """Why ``target`` must not be written (it is one of ``docs``' files, or an existing result
    document), or None when it may be."""
    path = Path(target)
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return None  # the writer reports what is wrong with the path itself
    for doc in docs:
        source = doc.get("_path")
        if source and Path(source).resolve() == real:
            return f"{target} is one of the report's input results; choose another file"
    if real.is_file():
        try:
            load_result(real)
        except ResultFileError:
            return None
        return f"{target} is a result document; a report never writes over one"
    return None


def same_file_twice(targets: dict[str, str | os.PathLike | None]) -> str | None:
    """Why these outputs (option → file) cannot all be written: two options naming one file (each
    would write over the other, and only the last would be left), or None."""
    seen: dict[str, str] = {}
    for option, target in targets.items():
        if not target:
            continue
        real = os.path.realpath(os.path.expanduser(target))
        if real in seen:
            return f"{seen[real]} and {option} name the same file {target}; give each output its own file"
        seen[real] = option
    return None
