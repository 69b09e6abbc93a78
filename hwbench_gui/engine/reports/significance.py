"""Whether two figures differ (Mann-Whitney U on the raw samples, or the p5-p95 interval against a published
figure), the ratio "times better than the baseline", and the composite's geometric mean."""

from __future__ import annotations

import math
from typing import Sequence

from hwbench_gui.engine.reports.marks import MARK_TOO_FEW
from hwbench_gui.engine.reports.metric import Metric

ALPHA = 0.05


def geometric_mean(values: Sequence[float]) -> float | None:
    """Geometric mean of positive numbers; None for an empty list or a non-positive value."""
    if not values or any(v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def min_two_sided_p(n1: int, n2: int) -> float:
    """The smallest two-sided p Mann-Whitney U can give for ``n1`` and ``n2`` samples: 2 / C(n1 + n2, n1), 0 once
    that count of arrangements is beyond a float (a few hundred samples a side)."""
    arrangements = math.comb(n1 + n2, n1)
    return 2.0 / arrangements if arrangements.bit_length() < 1000 else 0.0


def significance(a: Metric, b: Metric, alpha: float = ALPHA) -> tuple[bool | None, str, float | None]:
    """(differs?, test name, p-value). ``differs`` is None when no test is possible; the test name
    then says why (:data:`MARK_TOO_FEW` when two measured sides have too few samples)."""
    if not (a.published or b.published):
        n1, n2 = len(a.samples), len(b.samples)
        if n1 < 2 or n2 < 2 or min_two_sided_p(n1, n2) >= alpha:
            return None, f"{MARK_TOO_FEW} (n={n1} vs {n2}: Mann-Whitney cannot reach p < {alpha:g})", None
        if len(set(a.samples) | set(b.samples)) == 1:
            return False, "Mann-Whitney U", 1.0
        from scipy.stats import mannwhitneyu

        p = float(mannwhitneyu(a.samples, b.samples, alternative="two-sided").pvalue)
        return p < alpha, "Mann-Whitney U", p
    if not a.has_spread() and not b.has_spread():
        return None, "none (no spread on either side)", None
    (a_low, a_high), (b_low, b_high) = a.interval(), b.interval()
    overlap = a_low <= b_high and b_low <= a_high
    return not overlap, "p5-p95 overlap", None


def ratio(metric: Metric, baseline: Metric) -> float | None:
    """Times better than the baseline (lower-is-better figures inverted)."""
    if metric.value is None or baseline.value is None or metric.value <= 0 or baseline.value <= 0:
        return None
    return metric.value / baseline.value if baseline.higher_is_better else baseline.value / metric.value
