"""Paired ties with the best (ldpbench/stats/paired.py): Holm, and the Wilcoxon decision."""

from __future__ import annotations

import numpy as np
from support import paired_noisy

from ldpbench.stats.paired import compare_with_best, holm


def test_holm_matches_the_step_down_by_hand():
    # m = 3: sorted 0.01*3, 0.02*2 -> max(0.03, 0.04), 0.04*1 -> max(.., 0.04)
    got = holm([0.04, 0.01, 0.02, float("nan")])
    assert np.allclose(got[:3], [0.04, 0.03, 0.04]) and np.isnan(got[3])
    assert holm([0.6, 0.9]).tolist() == [1.0, 1.0]  # 0.6 * 2 capped at 1; monotone after it


def test_identical_outputs_are_always_tied():
    row = np.random.default_rng(1).gamma(2.0, 1.0, 20)
    res = compare_with_best(np.vstack([row, row, row * 3]), greater_is_better=False)
    assert [r.tied_best for r in res] == [True, True, False]
    assert res[0].rank == res[1].rank == 1 and res[2].rank == 3


def test_a_planted_one_percent_difference_at_200_repeats_is_found():
    res = compare_with_best(paired_noisy(7, 200, 0.01), greater_is_better=False)
    assert res[0].rank == 1 and res[0].tied_best
    assert not res[1].tied_best and res[1].p_value < 0.05
    assert res[1].diff_low > 0  # the bootstrap interval of (row - best) excludes 0


def test_direction_greater_is_better_and_failed_rows():
    v = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0], [np.nan] * 4])
    res = compare_with_best(v, greater_is_better=True)
    assert res[1].rank == 1 and res[0].rank == 2 and res[2].rank is None
    assert not res[2].tied_best and np.isnan(res[2].p_value)


def test_too_few_repeats_give_no_verdict_rather_than_a_tie():
    """Five repeats cannot show a difference at alpha 0.05 (smallest p 2/2^5): no row is marked
    tied or worse, however far apart; six can."""
    best = np.array([1.0, 1.2, 0.9, 1.1, 1.05, 0.95])
    far = best * 10
    five = compare_with_best(np.vstack([best[:5], far[:5], best[:5]]), greater_is_better=False)
    assert five[0].tied_best is True and five[1].tied_best is None
    assert five[2].tied_best is True  # identical outputs are a tie whatever the repeats
    six = compare_with_best(np.vstack([best, far]), greater_is_better=False)
    assert six[1].tied_best is False and six[1].p_value == 2 / 2**6
    assert compare_with_best(np.vstack([best[:5], far[:5]]), False, alpha=0.0625)[1].tied_best is False
