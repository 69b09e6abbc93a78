"""Statistics of raw samples: percentiles, median and spread, and the summary result documents store.

One definition of a percentile for the whole engine: linear interpolation between order statistics
(numpy's default), so a figure's median, a sweep point's p5/p95 and a document's summary agree."""

from __future__ import annotations

import math
from typing import Any, Iterable

#: Keys of :func:`summarize`'s dict, in the order documents show them.
STAT_KEYS = ("median", "mean", "p5", "p95", "stdev", "min", "max", "n")


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) by linear interpolation; None when empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Iterable[float]) -> float:
    """The median of a non-empty sequence."""
    result = percentile(values, 50.0)
    if result is None:
        raise ValueError("median of no values")
    return result


def spread(values: Iterable[float]) -> tuple[float, float]:
    """(p5, p95), for a Series' ``y_spread``."""
    values = list(values)
    return (percentile(values, 5.0), percentile(values, 95.0))


def finite_samples(samples: Iterable[Any]) -> list[float]:
    """The samples that are real numbers (``None``, NaN, inf and non-numbers dropped)."""
    values = []
    for sample in samples or ():
        if isinstance(sample, bool) or not isinstance(sample, (int, float)):
            continue
        if math.isfinite(sample):
            values.append(float(sample))
    return values


def summarize(samples: Iterable[Any]) -> dict[str, float | int | None]:
    """Median, mean, 5th/95th percentile, sample standard deviation, min, max and count.

    Only finite numbers count (``n`` says how many). Percentiles interpolate linearly between
    order statistics (numpy's default method), so for 1..10 the p5 is 1.45 and the p95 9.55.
    ``stdev`` (ddof=1) is ``None`` below two samples; everything but ``n`` is ``None`` with none.
    """
    import numpy as np

    values = finite_samples(samples)
    n = len(values)
    if n == 0:
        return {key: None for key in STAT_KEYS[:-1]} | {"n": 0}
    array = np.asarray(values, dtype=float)
    p5, median, p95 = (float(v) for v in np.percentile(array, [5.0, 50.0, 95.0]))
    return {
        "median": median,
        "mean": float(array.mean()),
        "p5": p5,
        "p95": p95,
        "stdev": float(array.std(ddof=1)) if n >= 2 else None,
        "min": float(array.min()),
        "max": float(array.max()),
        "n": n,
    }
