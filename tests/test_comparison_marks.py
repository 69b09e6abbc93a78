"""The mark and ratio a comparison gives when the samples are few or unequal in number.

Known answers: with n1 vs n2 samples and no ties, the smallest two-sided Mann-Whitney p is
2 / C(n1 + n2, n1): 2 vs 2 -> 1/3, 3 vs 3 -> 0.1, 3 vs 9 -> 2/220 ≈ 0.0091, 4 vs 4 -> 2/70 ≈ 0.029.
"""

from __future__ import annotations

import math

import pytest
from reports_data import make_doc

from hwbench_gui.engine.reports import compare


def _cell(baseline_samples, other_samples, *, higher_is_better=True):
    base = make_doc(samples=baseline_samples, host="alpha", gpu="GPU A", higher_is_better=higher_is_better)
    other = make_doc(samples=other_samples, host="beta", gpu="GPU B", higher_is_better=higher_is_better)
    result = compare.compare(compare.sides_by_machine([base, other]), baseline=0)
    assert len(result.rows) == 1
    return result.rows[0].cells[1]


@pytest.mark.parametrize("baseline, other, expected_ratio", [
    ([100.0, 101.0], [150.0, 151.0], 150.5 / 100.5),          # ranges far apart, yet only p >= 1/3
    ([100.0, 101.0, 102.0], [150.0, 151.0, 152.0], 151.0 / 101.0),  # p >= 0.1
    ([100.0, 101.0, 102.0, 103.0], [150.0], 150.0 / 101.5),  # one sample here: no test at all
])
def test_different_medians_with_too_few_samples_get_no_better_or_worse(baseline, other, expected_ratio):
    cell = _cell(baseline, other)
    assert cell.mark == compare.MARK_TOO_FEW
    assert cell.p_value is None
    assert cell.test.startswith(compare.MARK_TOO_FEW)
    assert f"n={len(other)} vs {len(baseline)}" in cell.test
    # The ratio is still shown: it is the test, not the figure, that the samples cannot support.
    assert cell.ratio == pytest.approx(expected_ratio)


def test_too_few_samples_only_in_the_baseline_leave_the_cell_untested():
    # The flag belongs to the baseline's document; this side's four samples are enough.
    cell = _cell([100.0], [150.0, 151.0, 152.0, 153.0])
    assert cell.mark == compare.MARK_UNTESTED
    assert cell.p_value is None
    assert "too few repeats in the baseline (n=1)" in cell.note
    assert cell.ratio == pytest.approx(151.5 / 100.0)


def test_four_against_four_separated_samples_are_tested_and_marked():
    cell = _cell([100.0, 101.0, 102.0, 103.0], [150.0, 151.0, 152.0, 153.0])
    assert cell.mark == compare.MARK_BETTER
    assert cell.test == "Mann-Whitney U"
    assert cell.p_value == pytest.approx(2 / math.comb(8, 4))


# Asymmetric samples: the mean and the median differ, so a ratio of means would be caught.
NINE = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 150.0]   # median 104, mean ≈ 108.7
THREE = [120.0, 125.0, 190.0]                                            # median 125, mean 145
# THREE beats 8, 8 and 9 of NINE: U = 25 of 27. Exactly 4 of the C(12, 3) = 220 rank sets reach
# U >= 25 (U = 27, 26, and two with 25), so the exact two-sided p is 2 * 4/220.
P_THREE_NINE = 8 / 220


def test_three_against_nine_higher_is_better():
    cell = _cell(NINE, THREE)
    assert cell.mark == compare.MARK_BETTER
    assert cell.ratio == pytest.approx(125.0 / 104.0)
    assert cell.p_value == pytest.approx(P_THREE_NINE)
    reverse = _cell(THREE, NINE)
    assert reverse.mark == compare.MARK_WORSE
    assert reverse.ratio == pytest.approx(104.0 / 125.0)
    assert reverse.p_value == pytest.approx(P_THREE_NINE)


def test_three_against_nine_lower_is_better_inverts_ratio_and_mark():
    cell = _cell(NINE, THREE, higher_is_better=False)
    assert cell.mark == compare.MARK_WORSE
    assert cell.ratio == pytest.approx(104.0 / 125.0)
    reverse = _cell(THREE, NINE, higher_is_better=False)
    assert reverse.mark == compare.MARK_BETTER
    assert reverse.ratio == pytest.approx(125.0 / 104.0)


def test_three_against_nine_overlapping_is_not_significant():
    # Interleaved ranks: p far above 0.05 although the medians differ (104 vs 105).
    cell = _cell(NINE, [103.5, 105.0, 106.5])
    assert cell.mark == compare.MARK_NOT_SIGNIFICANT
    assert cell.p_value > 0.5
    assert cell.ratio == pytest.approx(105.0 / 104.0)
