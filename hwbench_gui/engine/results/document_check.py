"""The shape every reader of a result document relies on, checked once when the document is loaded.

A document is foreign input (another machine's, an edited one, a hostile one). Compare, the charts,
the HTML, PDF and CSV writers and the GUI read the fields below without re-checking them, so each is
checked here: its type, its range where a reader divides by it or draws it (no number beyond
:data:`MAX_MAGNITUDE`, no power limit of 0), and for text, that it can be written back as UTF-8 (a lone
surrogate ``\\ud800`` parses as JSON but cannot). The ``details`` a kind's own page and report section
read (the burn-in's health, the language models' rows) are checked per kind (:data:`KINDS`). Keys not
listed are kept but never read by the reports.

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

#: Larger magnitudes are no measurement in any unit hwbench writes (bytes, FLOP, tokens/s, seconds), and
#: 1e308 overflows the first sum or ratio a chart takes (matplotlib's ticks end in "arange: cannot compute length").
MAX_MAGNITUDE = 1e18

Check = Callable[[Any, str], "str | None"]


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) <= MAX_MAGNITUDE)


def text(value: Any, where: str) -> str | None:
    return None if isinstance(value, str) else f"{where} is not text"


def number(value: Any, where: str) -> str | None:
    if _is_number(value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return f"{where} {_short(value)} is beyond {MAX_MAGNITUDE:g} (no measurement is that large)"
    return f"{where} {_short(value)} is not a finite number"


def at_least(low: float, *, above: bool = False) -> Check:
    """A finite number ``>= low`` (``> low`` with ``above``): a power limit of 0 divides by zero, a negative
    count or rate means nothing."""
    def run(value: Any, where: str) -> str | None:
        found = number(value, where)
        if found:
            return found
        if value < low or (above and value == low):
            return f"{where} {_short(value)} is not {'above' if above else 'at least'} {low:g}"
        return None
    return run


def one_of(*choices: str) -> Check:
    def run(value: Any, where: str) -> str | None:
        return None if value in choices else f"{where} {_short(value)} is not one of {', '.join(choices)}"
    return run


def integer(value: Any, where: str) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_MAGNITUDE
    return None if ok else f"{where} {_short(value)} is not an integer"


def count(value: Any, where: str) -> str | None:
    """An integer >= 0."""
    found = integer(value, where)
    return found or (f"{where} {_short(value)} is negative" if value < 0 else None)


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

# -- what each kind's own pages and report sections read ----------------------------------------------

_LEVEL = one_of("PASS", "WARN", "FAIL", "NOTE")
_VERDICT = one_of("PASS", "WARN", "FAIL")
_REASONS = list_of(obj({"level": _LEVEL, "rule": optional(text), "scope": optional(scalar), "text": optional(text)}))
_NON_NEGATIVE = at_least(0)
_POSITIVE = at_least(0, above=True)
_READINGS = list_of(optional(_NON_NEGATIVE))
_LOAD = obj({"name": optional(text), "unit": optional(text), "rate": optional(_READINGS), "rate_t": optional(_READINGS),
             "check_errors": optional(list_of(anything)), "results_compared": optional(count),
             "load_error": optional(text), "checked": optional(boolean)})
_TIMELINE = obj({"t": optional(_READINGS), "power_w": optional(_READINGS),
                 "power_limit_w": optional(list_of(optional(_POSITIVE))),
                 "temp_c": optional(_NUMBERS), "mem_temp_c": optional(_NUMBERS), "sm_clock_mhz": optional(_READINGS),
                 "mem_clock_mhz": optional(_READINGS), "util_percent": optional(_READINGS),
                 "reasons": optional(list_of(optional(count))), "step": optional(at_least(1))})
_HEALTH = obj({
    "verdict": optional(_VERDICT), "duration_s": optional(_NON_NEGATIVE), "watch_interval_s": optional(_POSITIVE),
    "checking": optional(boolean), "no_gpu_reason": optional(text), "reasons": optional(_REASONS),
    "gpus": optional(list_of(obj({"index": optional(count), "name": optional(text), "verdict": optional(_VERDICT),
                                  "reasons": optional(_REASONS), "timeline": optional(_TIMELINE),
                                  "load": optional(_LOAD),
                                  "burn": optional(obj({"burns": optional(boolean), "level": optional(_LEVEL),
                                                        "text": optional(text)}))}))),
    "host": optional(obj({"verdict": optional(_VERDICT), "reasons": optional(_REASONS),
                          "loads": optional(list_of(_LOAD))})),
})
_PERCENTILES = obj({"p50": optional(_NON_NEGATIVE), "p99": optional(_NON_NEGATIVE)})
_DEPTH_ROW = obj({"depth": optional(_NON_NEGATIVE), "bound_tokens_per_s": optional(_POSITIVE),
                  "fraction_of_bound": optional(_NON_NEGATIVE), "tokens_per_s": optional(_READINGS)})
_SERVING_POINT = obj({"concurrency": optional(at_least(1)), "output_tokens_per_s": optional(_READINGS),
                      "tpot": optional(_PERCENTILES), "ttft": optional(_PERCENTILES), "meets_target": optional(boolean),
                      "tpot_s": optional(_READINGS), "ttft_s": optional(_READINGS)})
_LLM_INFER = obj({
    "pp": optional(list_of(_DEPTH_ROW)), "tg": optional(list_of(_DEPTH_ROW)),
    "serving": optional(list_of(_SERVING_POINT)),
    "targets": optional(obj({"tpot_p99_ms": optional(_POSITIVE), "ttft_p99_s": optional(_POSITIVE)})),
    "limits": optional(obj({key: optional(_POSITIVE) for key in (
        "bandwidth_gbps_median", "matmul_tflops_median", "fp8_matmul_tflops_median")})),
    "datasheet": optional(obj({"model": optional(text), "memory_gb_per_s": optional(_POSITIVE),
                               "peak_tflops": optional(_POSITIVE)})),
    "largest_concurrency_within_target": optional(at_least(1)),
    "memory": optional(obj({"plan": optional(obj({"total_bytes": optional(_NON_NEGATIVE)})),
                            "peak_allocated_bytes": optional(_NON_NEGATIVE)})),
    "what_fits": optional(obj({"models": optional(list_of(obj({"model": optional(scalar), "precision": optional(scalar),
                                                               "fits_one": optional(boolean),
                                                               "fits_all": optional(boolean)}))),
                               "free_bytes": optional(_READINGS), "positions": optional(scalar),
                               "table": optional(list_of(obj({
                                   "model": optional(scalar), "weights": optional(scalar),
                                   "context": optional(_NON_NEGATIVE), "weights_bytes": optional(_NON_NEGATIVE),
                                   "kv_cache_bytes": optional(_NON_NEGATIVE),
                                   "workspace_bytes": optional(_NON_NEGATIVE),
                                   "total_bytes": optional(_NON_NEGATIVE), "per_gpu_bytes": optional(_NON_NEGATIVE),
                                   "fits": optional(map_of(optional(boolean)))}))),
                               "table_against": optional(scalar)})),
})
_BYTES_BY_PART = map_of(optional(_NON_NEGATIVE))
_LLM_TRAIN_DETAILS = obj({
    "memory_estimate": optional(obj({"persistent_bytes": optional(_BYTES_BY_PART), "forward_bytes": optional(
        _BYTES_BY_PART), "gradient_bytes": optional(_BYTES_BY_PART), "scheme": optional(text)})),
    "what_fits": optional(obj({"rows": optional(list_of(obj({
        "model": optional(scalar), "method": optional(scalar), "verdict": optional(scalar),
        "params": optional(_NON_NEGATIVE), "peak_gib_micro_batch_1": optional(_NON_NEGATIVE),
        "peak_gib_checkpointed": optional(_NON_NEGATIVE)})))})),
    "summary": optional(list_of(anything)),
})
_MFU = obj({"value": optional(_NON_NEGATIVE), "reason": optional(text),
            **{key: optional(_POSITIVE) for key in ("peak_tflops", "fp8_peak_tflops", "matmul_tflops",
                                                    "fp8_matmul_tflops")}})
_LLM_TRAIN_FIGURES = obj({"mfu_datasheet": optional(_MFU), "mfu_measured_matmul": optional(_MFU),
                          "peak_allocated_gib": optional(obj({"value": optional(_NON_NEGATIVE)})),
                          "memory_estimate_gib": optional(obj({"value": optional(_POSITIVE)})),
                          "tokens_per_step": optional(obj({"value": optional(_NON_NEGATIVE)}))})
_DIFFUSION_MFU = obj({"value": optional(_NON_NEGATIVE), "reason": optional(text),
                     **{key: optional(_POSITIVE) for key in ("peak_tflops", "fp8_peak_tflops", "matmul_tflops",
                                                             "fp8_matmul_tflops", "least_step_s")}})
_DIFFUSION_FIGURES = obj({
    **{name: optional(obj({"value": optional(_NON_NEGATIVE)})) for name in (
        "step_time", "vae_decode", "images_per_minute_bound", "images_per_minute_share", "memory_estimate_gib",
        "memory_peak_gib", "flops_per_step", "matmul_tflops")},
    "mfu_datasheet": optional(_DIFFUSION_MFU), "mfu_measured_matmul": optional(_DIFFUSION_MFU)})

#: Per benchmark id, the fields its own page and report section read beyond :data:`DOCUMENT`.
KINDS: dict[str, Check] = {
    "health.burnin": obj({"details": optional(obj({"health": optional(_HEALTH)}))}),
    "llm.infer": obj({"details": optional(_LLM_INFER)}),
    "llm.train": obj({"details": optional(_LLM_TRAIN_DETAILS), "figures": optional(_LLM_TRAIN_FIGURES),
                      "figure": optional(obj({"value": optional(_NON_NEGATIVE)}))}),
    "diffusion.infer": obj({"figures": optional(_DIFFUSION_FIGURES),
                            "figure": optional(obj({"value": optional(_NON_NEGATIVE)}))}),
}

# json.loads turns a "\ud800" escape into a lone surrogate; only such escapes can make one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def problem(doc: dict[str, Any], raw_text: str | None = None) -> str | None:
    """What is wrong with ``doc`` for the readers, or None. ``raw_text`` (the file's JSON) lets the
    text check run only when the file holds surrogate escapes at all."""
    found = DOCUMENT(doc, "")
    if found:
        return found
    kind = KINDS.get(doc["benchmark"]["id"])
    found = kind(doc, "") if kind is not None else None
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
