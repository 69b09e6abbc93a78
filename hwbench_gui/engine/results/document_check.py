"""The shape every reader of a result document relies on, checked once when the document is loaded.

A document is foreign input (another machine's, an edited one, a hostile one). Compare, the charts,
the HTML, PDF and CSV writers and the GUI read the fields below without re-checking them, so each is
checked here: its type, and for text, that it can be written back as UTF-8 (a lone surrogate
``\\ud800`` parses as JSON but cannot). Keys not listed are kept but never read by the reports.

:func:`problem` returns the first thing wrong, in words, or None.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any, Callable

#: A benchmark id longer than this is not one of ours and would not fit in a file name.
MAX_ID_CHARS = 100
#: Start times outside these years are edits or clock errors, and break date arithmetic at the ends.
YEARS = (1970, 2200)

Check = Callable[[Any, str], "str | None"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def text(value: Any, where: str) -> str | None:
    return None if isinstance(value, str) else f"{where} is not text"


def number(value: Any, where: str) -> str | None:
    return None if _is_number(value) else f"{where} {_short(value)} is not a finite number"


def integer(value: Any, where: str) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return None if ok else f"{where} {_short(value)} is not an integer"


def boolean(value: Any, where: str) -> str | None:
    return None if isinstance(value, bool) else f"{where} is not true or false"


def scalar(value: Any, where: str) -> str | None:
    ok = value is None or isinstance(value, (str, bool)) or _is_number(value)
    return None if ok else f"{where} is not a plain value"


def anything(_value: Any, _where: str) -> str | None:
    return None


def optional(check: Check) -> Check:
    return lambda value, where: None if value is None else check(value, where)


def list_of(check: Check, limit: int | None = None) -> Check:
    def run(value: Any, where: str) -> str | None:
        if not isinstance(value, list):
            return f"{where} is not a list"
        if limit is not None and len(value) > limit:
            return f"{where} has {len(value)} entries (at most {limit})"
        for i, item in enumerate(value):
            found = check(item, f"{where}[{i}]")
            if found:
                return found
        return None
    return run


def map_of(check: Check) -> Check:
    """An object with any keys, each value passing ``check``."""
    def run(value: Any, where: str) -> str | None:
        if not isinstance(value, dict):
            return f"{where} is not an object"
        for key, item in value.items():
            found = check(item, f"{where}.{key}")
            if found:
                return found
        return None
    return run


def obj(fields: dict[str, Check]) -> Check:
    """An object whose listed keys, where present, pass their checks (others are not read)."""
    def run(value: Any, where: str) -> str | None:
        if not isinstance(value, dict):
            return f"{where} is not an object"
        for key, check in fields.items():
            if key in value:
                found = check(value[key], f"{where}.{key}" if where else key)
                if found:
                    return found
        return None
    return run


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _start_time(value: Any, where: str) -> str | None:
    if not isinstance(value, str):
        return f"{where} is not text"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return f"{where} {_short(value)} is not an ISO date and time"
    if not YEARS[0] <= when.year <= YEARS[1]:
        return f"{where} {_short(value)} is outside {YEARS[0]}–{YEARS[1]}"
    try:
        (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone()
    except (OverflowError, OSError, ValueError):
        return f"{where} {_short(value)} cannot be shown in local time"
    return None


def _benchmark_id(value: Any, where: str) -> str | None:
    if not isinstance(value, str) or not value:
        return "not a result document (benchmark.id is missing or not text)"
    if len(value) > MAX_ID_CHARS:
        return f"{where} is {len(value)} characters long (at most {MAX_ID_CHARS})"
    return None


_PARAM = lambda value, where: (list_of(scalar)(value, where) if isinstance(value, list)  # noqa: E731
                               else scalar(value, where))
_STATS = map_of(optional(number))
_NUMBERS = list_of(optional(number))
_TEXTS = list_of(text)
_SUMMARY = map_of(optional(obj({"mean": optional(number), "max": optional(number), "min": optional(number),
                                "median": optional(number)})))
_TELEMETRY = obj({
    "seed": _SUMMARY,
    "metrics": _SUMMARY,
    "noise": obj({"busy": optional(boolean), "reasons": optional(_TEXTS)}),
})
_FIGURE = obj({"name": optional(text), "value": optional(number), "unit": optional(text),
               "higher_is_better": optional(boolean), "samples": optional(_NUMBERS), "stats": optional(_STATS)})
_SERIES = obj({"label": optional(scalar), "x": _NUMBERS, "y": _NUMBERS, "y_spread": optional(list_of(
    optional(list_of(optional(number))))), "x_label": optional(text), "y_label": optional(text),
               "x_log": optional(boolean)})

DOCUMENT = obj({
    "id": optional(text),
    "benchmark": obj({"id": _benchmark_id, "title": optional(text), "category": optional(text),
                      "version": optional(scalar), "comparability_params": optional(_TEXTS)}),
    "params": map_of(_PARAM),
    "precision": optional(text),
    "figure": optional(_FIGURE),
    "samples": optional(_NUMBERS),
    "stats": optional(_STATS),
    "figures": optional(map_of(_FIGURE)),
    "series": optional(list_of(_SERIES)),
    "method": optional(text),
    "device": optional(text),
    "details": optional(obj({"stages": optional(list_of(obj({"key": optional(text),
                                                             "rate_images_per_s": optional(number)}))),
                             "limiting_stage": optional(text), "bottleneck": optional(text),
                             "bottleneck_name": optional(text), "verdict": optional(text)})),
    "reason": optional(text),
    "warnings": optional(_TEXTS),
    "started_at": optional(_start_time),
    "duration_s": optional(number),
    "hostname": optional(text),
    "inventory": optional(obj({
        "hostname": optional(text),
        "gpus": optional(list_of(obj({"name": optional(text)}))),
        "cpu": optional(obj({"model": optional(text), "logical_cores": optional(integer)})),
        "memory": optional(obj({"total_bytes": optional(number)})),
        "gpu_system": optional(obj({"driver_version": optional(text), "device_count": optional(integer)})),
    })),
    "software": optional(map_of(anything)),
    "telemetry": optional(_TELEMETRY),
    "telemetry_whole_run": optional(_TELEMETRY),
    "reference": optional(obj({key: optional(text) for key in (
        "publisher", "title", "source_url", "published", "system", "configuration", "notes")})),
})

# json.loads turns a "\ud800" escape into a lone surrogate; only such escapes can make one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def problem(doc: dict[str, Any], raw_text: str | None = None) -> str | None:
    """What is wrong with ``doc`` for the readers, or None. ``raw_text`` (the file's JSON) lets the
    text check run only when the file holds surrogate escapes at all."""
    found = DOCUMENT(doc, "")
    if found:
        return found
    if raw_text is None or _SURROGATE_ESCAPE.search(raw_text):
        return _unencodable(doc)
    return None


def _unencodable(doc: Any) -> str | None:
    stack = [("", doc)]
    while stack:
        where, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            for part, label in ((key, "a key"), (item, "text")):
                if isinstance(part, str):
                    try:  # a file name's undecodable bytes (os.fsdecode's \udc80-\udcff) are kept, shown escaped
                        part.encode("utf-8", "surrogateescape")
                    except UnicodeEncodeError:
                        return f"{where or 'the document'} holds {label} that is not valid Unicode (a lone surrogate)"
            if isinstance(item, (dict, list)):
                stack.append((f"{where}.{key}" if where else str(key), item))
    return None
