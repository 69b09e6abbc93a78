"""What every chart of a report is drawn with: the :class:`Chart` record, a figure without pyplot, wrapped labels,
grouped bars, a legend below the plot and the PNG/SVG writers. :mod:`charts`, :mod:`datapath_charts`,
:mod:`power_charts` and the benchmark families' sections draw with these, and none of them imports another's
private names."""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

# Figure objects without pyplot: no GUI backend is chosen or needed, and nothing global changes.
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from hwbench_gui.engine.reports.sides import Side


@dataclass
class Chart:
    key: str
    title: str
    figure: Figure
    caption: str = ""


#: Resolution of PNG charts (HTML reports, the Reports tab): sharp text when a browser zooms.
PNG_DPI = 150


def to_png(figure: Figure, dpi: int = PNG_DPI) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def to_svg(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    return buffer.getvalue()


def new_figure(width: float = 8.0, height: float = 4.2) -> tuple[Figure, Any]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def short(name: str, limit: int = 42, lines: int = 3) -> str:
    """``name`` wrapped at ``limit`` characters on up to ``lines`` lines (only what is beyond is cut)."""
    if len(name) <= limit:
        return name
    wrapped = textwrap.wrap(name, limit, break_long_words=True, break_on_hyphens=False)
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: limit - 1] + "…"
    return "\n".join(wrapped)


def drawn_docs(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("status") in ("ok", "published") and (d.get("figure") or {}).get("value")
            is not None]


def param(doc: dict[str, Any], key: str, default: Any = None) -> Any:
    return (doc.get("params") or {}).get(key, default)


def grouped_bars(ax, groups: list[str], series: dict[str, dict[str, float]], ylabel: str,
                  value_format: str = "{:.3g}") -> None:
    """Bars per group (x) and series (hue); a missing value leaves a gap."""
    names = list(series)
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        xs = [g + (i - (len(names) - 1) / 2) * width for g in range(len(groups))]
        values = [series[name].get(group) for group in groups]
        present = [(x, v) for x, v in zip(xs, values) if v is not None]
        if not present:
            continue
        bars = ax.bar([x for x, _ in present], [v for _, v in present], width * 0.95, label=short(name, 70))
        ax.bar_label(bars, labels=[value_format.format(v) for _, v in present], fontsize=7, padding=1)
    # Wrapped, not rotated and cut: a group's whole name stays readable under its bars.
    per_group = max(10, int(90 / max(len(groups), 1)))
    ax.set_xticks(range(len(groups)), [short(g, per_group, lines=4) for g in groups],
                  fontsize=8 if len(groups) <= 6 else 7)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if len(names) > 1 or (names and names[0]):
        legend_below(ax)


def legend_below(ax) -> None:
    """Legend below the plot (outside it: long machine names must not cover bars or lines)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(handles, labels, loc="outside lower center", ncols=2 if len(labels) > 3 else 1,
                         fontsize=7, frameon=False)


def side_hue(side: Side, sides: Sequence[Side], *parts: Any) -> str:
    bits = [str(p) for p in parts if p not in (None, "")]
    if len(sides) > 1:  # last: long side names are cut in legends, the distinguishing parts are not
        bits.append(side.name)
    return " · ".join(bits)
