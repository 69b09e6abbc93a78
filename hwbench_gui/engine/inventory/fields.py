"""The "value or null plus a reason" habit every inventory section follows.

A section is a plain dict with a ``reasons`` dict beside its fields: a field that could not be read is
``None`` and ``reasons[field]`` says why. One failing read never stops the rest of the section.
"""

from __future__ import annotations

from typing import Any, Callable


def new_section(**fields: Any) -> dict[str, Any]:
    """A section dict with its ``reasons`` and ``warnings`` ready."""
    section: dict[str, Any] = dict(fields)
    section.setdefault("reasons", {})
    section.setdefault("warnings", [])
    return section


def put(section: dict[str, Any], key: str, value: Any, reason: str | None = None) -> Any:
    """Store ``value``; when it is ``None`` record ``reason`` for it. Returns ``value``."""
    section[key] = value
    if value is None and reason:
        section["reasons"][key] = reason
    else:
        section["reasons"].pop(key, None)
    return value


def guarded(section: dict[str, Any], key: str, read: Callable[[], Any], reason_if_none: str | None = None) -> Any:
    """Store ``read()``; an exception becomes ``None`` plus the exception as the reason."""
    try:
        value = read()
    except Exception as exc:
        return put(section, key, None, f"{type(exc).__name__}: {exc}")
    return put(section, key, value, reason_if_none)


def run_section(name: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a section builder; if it fails as a whole, return a section that says so instead of raising."""
    try:
        return build()
    except Exception as exc:
        section = new_section()
        section["error"] = f"{name} could not be read: {type(exc).__name__}: {exc}"
        return section
