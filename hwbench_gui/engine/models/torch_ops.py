"""Whether the installed PyTorch can run torchvision's operators, asked once and remembered.

torchvision's compiled operators are built for one torch build. PyPI's torchvision beside a torch from
PyTorch's CPU index imports with "operator torchvision::nms does not exist", so every PyTorch model
benchmark would fail at its first step while the catalogue said "ready". Finding out costs a torch import
in a child (the inventory's torch probe, seconds), so the answer is kept in the user data folder for the
installed pair (interpreter, torch and torchvision versions; a reinstall of another build changes the
version's local label, "+cpu" or "+cu130"). ``install.sh`` runs it once at the end, so a first listing
does not wait.

Run by hand: ``python -m hwbench_gui.engine.models.torch_ops`` prints one line and refreshes the answer.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hwbench_gui.engine import paths
from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.foreign import ForeignFileError, read_json
from hwbench_gui.engine.inventory import torch_probe

CACHE_NAME = "torch_ops.json"
MAX_CACHE_BYTES = 64 * 1024
PROBE_TIMEOUT_S = 120.0

_answers: dict[str, str | None] = {}


def installed_pair() -> dict[str, str] | None:
    """The interpreter and the installed torch / torchvision versions (read from their metadata, nothing
    imported); None when torch is not installed (the missing framework is reason enough)."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        vision_version = importlib.metadata.version("torchvision")
    except importlib.metadata.PackageNotFoundError:
        vision_version = "not installed"
    return {"python": sys.executable, "torch": torch_version, "torchvision": vision_version}


def reason_from_probe(report: dict[str, Any], pair: dict[str, str]) -> str | None:
    """Why PyTorch's model benchmarks cannot run, from the torch probe's report; None when they can or when
    the probe gave no answer (it could not start, timed out or died: the run itself will say what fails)."""
    ops = report.get("torchvision_ops")
    if not isinstance(ops, dict):
        reason = str(report.get("reason") or "")
        return f"PyTorch cannot be used: {reason}" if reason.startswith("torch could not be imported") else None
    if ops.get("ok") is True:
        return None
    return (f"torch {pair['torch']} cannot run torchvision {pair['torchvision']}'s operators ({ops.get('reason')}); "
            "install both from one index (sh install.sh does)")


def unusable_reason(probe: Callable[[], dict[str, Any]] | None = None,
                    cache_file: Path | None = None) -> str | None:
    """Why PyTorch cannot run the model benchmarks' operators here, or None; the child probe runs only when
    the installed pair has no remembered answer. A probe that gave no answer is not remembered."""
    pair = installed_pair()
    if pair is None:
        return None
    key = json.dumps(pair, sort_keys=True)
    if key in _answers:
        return _answers[key]
    cache_file = cache_file or _cache_file()
    remembered = _read_cache(cache_file)
    if remembered is not None and remembered.get("key") == pair:
        reason = remembered.get("reason")
        _answers[key] = reason if isinstance(reason, str) else None
        return _answers[key]
    report = (probe or (lambda: torch_probe.run_probe(timeout_s=PROBE_TIMEOUT_S)))()
    reason = reason_from_probe(report, pair)
    if isinstance(report.get("torchvision_ops"), dict) or reason is not None:  # an answer, not a failed probe
        _answers[key] = reason
        try:
            write_atomic(cache_file, json.dumps({"key": pair, "reason": reason}))
        except OSError:
            pass  # unremembered, it is asked again next time: slower, not wrong
    return reason


def forget() -> None:
    """Drop the answers remembered in this process (tests; a listing after an install)."""
    _answers.clear()


def _cache_file() -> Path:
    return paths.user_data_dir() / CACHE_NAME


def _read_cache(path: Path) -> dict[str, Any] | None:
    try:  # checked on the open file, its size and nesting bounded: the user data folder is writable by others' tools
        value = read_json(path, MAX_CACHE_BYTES, "the framework-support cache")
    except ForeignFileError:
        return None
    return value if isinstance(value, dict) else None


def main() -> int:
    """Ask again (the remembered answer is replaced) and print one line; exit status 0 either way, as the
    window greys what cannot run and says why."""
    forget()
    path = _cache_file()
    path.unlink(missing_ok=True)
    pair = installed_pair()
    if pair is None:
        print("hwbench: PyTorch is not installed: the PyTorch model benchmarks will show as unavailable")
        return 0
    reason = unusable_reason(cache_file=path)
    if reason is None:
        print(f"hwbench: torch {pair['torch']} runs torchvision {pair['torchvision']}'s operators (nms checked)")
    else:
        print(f"hwbench: {reason}: the PyTorch model benchmarks will show as unavailable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
