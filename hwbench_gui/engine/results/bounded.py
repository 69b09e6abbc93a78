"""How many points a drawing or a table of one series shows, and which.

A document may hold a series of any length its file size allows (10,000 serving points fit in 7 MB); a chart
or a page that draws each point, label and table row of such a series runs for minutes. A series over
:data:`MAX_SHOWN_POINTS` is shown as a bounded selection that keeps what the series means (its ends and the
points a verdict rests on), and whatever shows it says so (:func:`note`). The record itself is never cut:
the document, its CSV row and its comparison keep every point.
"""

from __future__ import annotations

from typing import Iterable

#: Points of one series a chart draws or a table lists.
MAX_SHOWN_POINTS = 48


def shown_indices(count: int, keep: Iterable[int] = (), limit: int = MAX_SHOWN_POINTS) -> list[int]:
    """The indices of a ``count``-point series to show: all of them up to ``limit``, else ``limit`` evenly
    spaced ones from the first to the last, plus each index in ``keep`` (sorted, no repeats)."""
    if count <= limit:
        return list(range(count))
    step = (count - 1) / (limit - 1)
    chosen = {round(i * step) for i in range(limit)}
    chosen.update(i for i in keep if 0 <= i < count)
    return sorted(chosen)


def note(what: str, count: int, shown: int) -> str:
    """``"10,000 serving points: 49 shown (...); the document keeps all"``, or "" when all are shown."""
    if shown >= count:
        return ""
    return (f"{count:,} {what}: {shown} shown (evenly spaced from the first to the last, with the points the "
            "verdict rests on); the document keeps all")
