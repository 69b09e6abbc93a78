"""Summary statistics of a benchmark's raw samples, as stored in result documents."""

from __future__ import annotations

import math
from typing import Any, Iterable

#: Keys of :func:`summarize`'s dict, in the order documents show them.
STAT_KEYS = ("median", "mean", "p5", "p95", "stdev", "min", "max", "n")


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
