"""Whether hwbench runs as a packaged build, and why a framework is missing in words that fit how it
was installed.

A packaged (PyInstaller) build leaves TensorFlow out (packaging/hwbench-gui.spec: about 2 GB more,
and it would share the bundle's CUDA libraries with torch). Its users may have no Python at all, so
"pip install" is no advice there: the reason says the build does not hold the framework.
"""

from __future__ import annotations

import sys


def is_frozen() -> bool:
    """True in a packaged build (PyInstaller sets ``sys.frozen``)."""
    return bool(getattr(sys, "frozen", False))


def not_in_bundle(label: str) -> str:
    """Why ``label`` (e.g. "TensorFlow") cannot run in a packaged build."""
    return (f"{label} is not part of this packaged hwbench (the build leaves it out to stay smaller); "
            f"hwbench installed from its source, as the README's Set up says, runs the {label} benchmarks")


def missing_reason(label: str, install_hint: str) -> str:
    """Why ``label`` cannot run here: the bundle's reason in a packaged build, else "not installed
    (``install_hint``)"."""
    return not_in_bundle(label) if is_frozen() else f"{label} is not installed ({install_hint})"
