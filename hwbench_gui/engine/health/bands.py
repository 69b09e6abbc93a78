"""The spans of a GPU's timeline during which a clock-event reason held, for the Health page's shaded bands
and the report: slowdowns (a WARN) apart from the power cap (normal at full load)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.health.rules import NOTE, POWER_CAP_BIT, SLOWDOWN_BITS, WARN

#: (bitmask, label, level) of the bands drawn, slowdowns first.
BAND_KINDS = ((sum(SLOWDOWN_BITS), "thermal / HW slowdown", WARN), (POWER_CAP_BIT, "power cap", NOTE))


def reason_bands(t: list[float], reasons: list[int | None], interval_s: float = 0.5) -> list[dict[str, Any]]:
    """``[{"start", "end", "label", "level", "names"}]``: each run of samples whose reasons mask has a bit
    of a kind in :data:`BAND_KINDS`; a sample stands for ``interval_s`` around it (so one sample is a
    visible band). ``names``: the slowdown reasons seen in the span."""
    out: list[dict[str, Any]] = []
    half = interval_s / 2
    for mask, label, level in BAND_KINDS:
        start = prev = None
        seen = 0
        for when, value in zip(t, reasons):
            hit = value is not None and int(value) & mask
            if hit and start is None:
                start, seen = when, 0
            if hit:
                prev, seen = when, seen | (int(value) & mask)
            elif start is not None:
                out.append(_band(start, prev, half, label, level, seen))
                start = None
        if start is not None:
            out.append(_band(start, prev, half, label, level, seen))
    return out


def _band(start: float, end: float, half: float, label: str, level: str, seen: int) -> dict[str, Any]:
    names = [name for bit, name in SLOWDOWN_BITS.items() if seen & bit]
    return {"start": max(0.0, start - half), "end": end + half, "label": label, "level": level, "names": names}
