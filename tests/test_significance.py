"""Whether two figures differ: Mann-Whitney U on the raw samples, with the smallest p a sample count allows."""

from __future__ import annotations

from hwbench_gui.engine.reports.metric import Metric
from hwbench_gui.engine.reports.significance import min_two_sided_p, significance


def _metric(samples: list[float]) -> Metric:
    doc = {"status": "ok", "samples": samples}
    return Metric(doc, "rate", sorted(samples)[len(samples) // 2], "GB/s", True, samples, None, True)


def test_the_smallest_p_of_a_few_samples_is_exact():
    assert min_two_sided_p(3, 3) == 2 / 20
    assert min_two_sided_p(4, 4) == 2 / 70


def test_thousands_of_samples_a_side_are_tested_not_overflowed():
    # C(4000, 2000) is about 10^1203: beyond a float, the smallest p is 0
    assert min_two_sided_p(2000, 2000) == 0.0
    low = _metric([1.0 + i * 1e-4 for i in range(2000)])
    high = _metric([2.0 + i * 1e-4 for i in range(2000)])
    differs, test, p = significance(low, high)
    assert differs is True and test == "Mann-Whitney U" and p < 1e-100
