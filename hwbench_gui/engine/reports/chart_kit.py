"""What every chart of a report is drawn with: the :class:`Chart` record, a figure without pyplot, wrapped labels
and the PNG/SVG writers. :mod:`charts` and the benchmark families' sections (:mod:`llm_section`,
:mod:`llm_train_section`) draw with these, and none of them imports another's private names."""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import Any

# Figure objects without pyplot: no GUI backend is chosen or needed, and nothing global changes.
from matplotlib.figure import Figure


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
