"""How a figure and its spread read, in one place for the CLI, the GUI and reports."""

from __future__ import annotations

import math
from typing import Any

from hwbench_gui.engine.spec.precision import NOT_APPLICABLE
from hwbench_gui.engine.spec.precision import of_document as precision_of


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def format_value(value: Any, unit: str = "") -> str:
    """``2259.4`` -> ``"2,259"``, ``123.45`` -> ``"123.5"``, ``11.0`` -> ``"11"``: four significant digits
    below a thousand, whole numbers with thousands separators above; ``"—"`` for no number."""
    if not is_number(value):
        return "—"
    text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return f"{text} {unit}".strip()


def spread_text(stats: dict[str, Any] | None, published: bool = False) -> str:
    """``"p5–p95 305–318, n=10"``; ``"no spread"`` below two samples."""
    s = stats or {}
    if (s.get("n") or 0) >= 2 and is_number(s.get("p5")) and is_number(s.get("p95")):
        return f"p5–p95 {format_value(s['p5'])}–{format_value(s['p95'])}, n={s['n']}"
    return "published, no spread" if published else "no spread"


def figure_text(doc: dict[str, Any]) -> str:
    """``"312 TFLOP/s"``; a failed run's reason instead."""
    figure = doc.get("figure") or {}
    if not is_number(figure.get("value")):
        return str(doc.get("reason") or "no figure")
    return format_value(figure["value"], str(figure.get("unit") or ""))


def figure_line(doc: dict[str, Any]) -> str:
    """``"gpu.matmul: tflops = 312 TFLOP/s (median of 10; p5 305, p95 318; BF16)"``."""
    figure = doc.get("figure") or {}
    stats = doc.get("stats") or {}
    bench_id = (doc.get("benchmark") or {}).get("id")
    text = f"{bench_id}: {figure.get('name')} = {figure_text(doc)}"
    details = [f"median of {stats.get('n')}"]
    if (stats.get("n") or 0) >= 2:
        details.append(f"p5 {format_value(stats.get('p5'))}, p95 {format_value(stats.get('p95'))}")
    label = precision_of(doc)
    if label not in ("", NOT_APPLICABLE):
        details.append(label)
    return f"{text} ({'; '.join(details)})"


def shown_lines(doc: dict[str, Any]) -> list[str]:
    """What a run asks to show beside its headline (the CLI prints it under the figure line): each figure
    marked ``show`` as ``"what: value"`` (or why it was not measured), then the lines of ``details.summary``.
    A fraction reads as a percentage; a share of a limit above 1 (MFU) never does: its limit was wrong."""
    out = []
    figures = doc.get("figures") if isinstance(doc.get("figures"), dict) else {}
    for name, fig in figures.items():
        if not isinstance(fig, dict) or fig.get("show") is not True:
            continue
        what = str(fig.get("what") or name)
        value, unit = fig.get("value"), str(fig.get("unit") or "")
        if not is_number(value):
            out.append(f"{what}: not measured ({fig.get('reason') or 'no value'})")
        elif unit == "fraction" and value > 1.0 and str(name).startswith("mfu"):
            out.append(f"{what}: limit not measured reliably here (the figure is above it; no share above 100 %)")
        elif unit == "fraction":
            out.append(f"{what}: {value:.1%}")
        else:
            out.append(f"{what}: {format_value(value, unit)}")
    summary = (doc.get("details") or {}).get("summary") if isinstance(doc.get("details"), dict) else None
    out += [str(line) for line in summary or [] if isinstance(line, str)]
    return out
