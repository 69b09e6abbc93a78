"""Figures no machine could have measured: above the theoretical limit its own document states.

A document's inventory states what the hardware can do at most (the RAM's rated speed and channels,
each GPU's peak rates at its maximum clock, memory bandwidth and PCIe link); a measured figure
above that limit was not measured, it was edited or forged. :func:`impossible_figures` says so, in
words, for each such figure; the comparison, the reports and the CSV show it beside the figure as
the document's own flag (:func:`hwbench_gui.engine.reports.flags.consistency_problems`).

Limits are theoretical peaks (bytes or FLOPs per clock × clock), so a real measurement stays below
them; :data:`ROUNDING` only absorbs the rounding of clocks and rates. Where the inventory does not
state a limit (no dmidecode, no NVML), the rule says nothing rather than guess one.

A document also stores figures as fractions of a limit (a language model's tokens/s of its bound, MFU of a
peak or a measured matmul rate, a measured rate of its datasheet's): any such fraction above 1 says the
limit, or the figure, is wrong, whatever the benchmark (:func:`fractions_above_one`).
"""

from __future__ import annotations

import re
from typing import Any

from hwbench_gui.engine.limits import Limit, limit_of
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.results.formatting import format_value

#: A figure this much above its limit is impossible (clock and rate rounding stay far inside it).
ROUNDING = 1.02


def impossible_figures(doc: dict[str, Any]) -> list[str]:
    """Each figure of ``doc`` above the limit its own document states, in words (empty when none is,
    and for published figures: their limits are their source's)."""
    if describe.is_published(doc):
        return []
    bench_id = str((doc.get("benchmark") or {}).get("id") or "")
    device = str(doc.get("device") or "")
    found: list[str] = []
    if bench_id.startswith("gpu.") and device.startswith("cpu"):
        found.append(f"a GPU benchmark ({bench_id}) whose device is the CPU ({device})")
    checks = {"host.membw": _host_memory, "gpu.matmul": _gpu_matmul, "gpu.d2d": _gpu_memory, "gpu.pcie": _pcie}
    if bench_id in checks:
        above = checks[bench_id](doc)
        if len(above) > 1:  # the first says why; the others repeat it for the sweep's other points
            above = [f"{above[0]} (and {len(above) - 1} more of its figures)"]
        found += above
    return found + fractions_above_one(doc)


#: Keys whose number is a fraction of a limit wherever they sit in a document.
_FRACTION_KEYS = re.compile(r"^(fraction_of_\w+|measured_\w+_fraction)$")
#: Figures (``unit`` "fraction") that are a share of a limit: model FLOPs utilisation.
_FRACTION_FIGURES = re.compile(r"^mfu(_\w+)?$")
_MAX_DEPTH = 6
_MAX_ITEMS = 1000


def fractions_above_one(doc: dict[str, Any]) -> list[str]:
    """Each stored fraction of a limit above 1.0, in words: figures named ``mfu*`` in the unit "fraction", and
    every ``fraction_of_*`` and ``measured_*_fraction`` in the figures and the details (a benchmark stores none:
    it gives such a figure no share, with the reason). A document is foreign input: the walk is bounded in depth and
    breadth, and what is not a number is passed over."""
    found: list[str] = []
    figures = doc.get("figures") if isinstance(doc.get("figures"), dict) else {}
    for name, entry in list(figures.items())[:_MAX_ITEMS]:
        if isinstance(entry, dict) and _FRACTION_FIGURES.match(str(name)) and entry.get("unit") == "fraction" \
                and describe.is_number(entry.get("value")) and entry["value"] > 1.0:
            found.append(f"{name} {entry['value']:.1%} of its limit is above 100 % (the limit or the figure is "
                         "wrong)")

    def walk(node: Any, where: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        items = list(node.items())[:_MAX_ITEMS] if isinstance(node, dict) else \
            list(enumerate(node))[:_MAX_ITEMS] if isinstance(node, list) else []
        for key, value in items:
            here = f"{where}.{key}" if where else str(key)
            if isinstance(node, dict) and isinstance(key, str) and _FRACTION_KEYS.match(key) \
                    and describe.is_number(value) and value > 1.0:
                found.append(f"{here} {value:.1%} of its limit is above 100 % (the limit or the figure is wrong)")
            elif isinstance(value, (dict, list)):
                walk(value, here, depth + 1)

    walk({"figures": figures, "details": doc.get("details")}, "", 0)
    return found


def _figures(doc: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(name, value, unit) of the headline and every named figure that has a number."""
    out = []
    for name, figure in [("", doc.get("figure")), *((doc.get("figures") or {}).items())]:
        if isinstance(figure, dict) and describe.is_number(figure.get("value")):
            out.append((str(name or figure.get("name") or "figure"), float(figure["value"]), str(figure.get("unit"))))
    return out


def _above(value: float, limit: float | None) -> bool:
    return limit is not None and limit > 0 and value > limit * ROUNDING


def _limited(doc: dict[str, Any], unit: str) -> list[tuple[str, float, Limit]]:
    """(name, value, limit) of each figure in ``unit`` above the most :func:`~hwbench_gui.engine.limits.limit_of`
    says its hardware could give."""
    found = []
    for name, value, figure_unit in _figures(doc):
        limit = limit_of(doc, name) if figure_unit == unit else None
        if limit is not None and _above(value, limit.most):
            found.append((name, value, limit))
    return found


def _host_memory(doc: dict[str, Any]) -> list[str]:
    details = doc.get("details") if isinstance(doc.get("details"), dict) else {}
    array_bytes, cache_bytes = details.get("array_bytes"), details.get("last_level_cache_bytes")
    if describe.is_number(array_bytes) and describe.is_number(cache_bytes) and array_bytes <= cache_bytes:
        return []  # arrays that fit the cache measure the cache, which may well beat the RAM
    return [f"{name} {format_value(value)} GB/s is above the {format_value(limit.most)} GB/s {limit.most_what}"
            for name, value, limit in _limited(doc, "GB/s")]


def _gpu_matmul(doc: dict[str, Any]) -> list[str]:
    return [f"{name} {format_value(value)} TFLOP/s is above its GPU's {format_value(limit.most)} TFLOP/s "
            f"{limit.most_what}" for name, value, limit in _limited(doc, "TFLOP/s")]


def _gpu_memory(doc: dict[str, Any]) -> list[str]:
    return [f"{name} {format_value(value)} GB/s is above its GPU's {format_value(limit.most)} GB/s {limit.most_what}"
            for name, value, limit in _limited(doc, "GB/s")]


def _pcie(doc: dict[str, Any]) -> list[str]:
    found = []
    for name, value, unit in _figures(doc):
        limit = limit_of(doc, name) if unit == "GB/s" else None
        both_ways = "bidirectional" in name
        own = None if limit is None or limit.most is None else limit.most * (2 if both_ways else 1)
        if _above(value, own):
            ways = " (both ways)" if both_ways else ""
            found.append(f"{name} {format_value(value)} GB/s is above the {format_value(own)} GB/s{ways} "
                         f"{limit.most_what}")
    return found
