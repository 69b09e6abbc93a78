"""Values as plain JSON: what protocol lines, result documents and the CLI's ``--json`` write."""

from __future__ import annotations

import dataclasses
import math
from pathlib import PurePath
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` turned into plain JSON types: non-finite floats become ``None``, numpy scalars and
    arrays become numbers and lists, tuples lists, paths strings, dataclasses dicts."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    # numpy scalars and arrays without importing numpy here.
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return jsonable(tolist())
    item = getattr(value, "item", None)
    if callable(item):
        return jsonable(item())
    return str(value)
