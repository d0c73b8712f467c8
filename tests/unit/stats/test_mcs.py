"""The model confidence set (ldpbench/stats/mcs.py): statistic, exact sign flips, elimination, limits."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.stats.mcs import _squared_t, confidence_set_p_values, data_seed, min_repeats, smallest_p


def test_squared_t_is_the_textbook_paired_t():
    d = np.array([[0.3, -0.1, 0.5, 0.2, 0.0, 0.4]])
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    got = _squared_t(d.sum(axis=1), (d * d).sum(axis=1), np.array([6.0]))
    assert got[0] == pytest.approx(t * t, rel=1e-12)
    # identical rows: 0; a constant non-zero difference: a sure one
    const = np.full(4, 0.5)
    assert _squared_t(np.array([0.0]), np.array([0.0]), np.array([4.0]))[0] == 0.0
    assert _squared_t(np.array([const.sum()]), np.array([(const**2).sum()]), np.array([4.0]))[0] == np.inf


def test_squared_t_in_place_is_the_five_pass_formula_bit_for_bit():
    """The buffers reused: the same operations in the same order as the formula written out."""
    rng = np.random.default_rng(3)
    sums = rng.normal(size=(64, 40)) * 10.0 ** rng.integers(-6, 6, 40)
    squares = (sums * sums).max(axis=0) * rng.uniform(1.0, 3.0, 40)
    count = rng.integers(0, 12, 40).astype(float)
    sums[:, 3], squares[3] = 0.0, 0.0  # an identically zero pair
    squares[5] = sums[0, 5] ** 2 / count[5] if count[5] else squares[5]  # u = 1 in row 0: a sure one
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where((count >= 2) & (squares > 0), 1.0 / (count * squares), 0.0)
        u = np.minimum(sums * sums * scale, 1.0)
        want = (count - 1) * u / (1.0 - u)
    got = _squared_t(sums, squares, count)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def test_smallest_p_and_min_repeats_follow_from_the_sign_flips():
    assert smallest_p(5) == 2 / 32 and smallest_p(6) == 2 / 64
    assert min_repeats(0.05) == 6 and min_repeats(0.0625) == 5 and min_repeats(0.01) == 8
    for alpha in (0.2, 0.05, 0.01, 0.001):
        r = min_repeats(alpha)
        assert smallest_p(r) <= alpha < smallest_p(r - 1)


def test_two_rows_give_the_exact_sign_flip_p_value():
    """At 2 rows and few repeats every sign vector is enumerated: a row worse in every repeat by
    distinct amounts reaches the smallest p, 2 / 2^R, and no smaller."""
    for repeats in (5, 6, 8):
        best = np.linspace(1.0, 2.0, repeats)
        worse = best + np.linspace(0.1, 0.3, repeats)
        p = confidence_set_p_values(np.vstack([best, worse]))
        assert p[0] == 1.0 and p[1] == pytest.approx(smallest_p(repeats))


def test_two_rows_agree_with_a_brute_force_sign_flip_t_test():
    rng = np.random.default_rng(4)
    loss = rng.gamma(2.0, 1.0, (2, 9))
    loss[1] += 0.4
    d = loss[1] - loss[0]
    t = abs(d.mean() / d.std(ddof=1))
    flips = np.array(np.meshgrid(*[[1.0, -1.0]] * 9)).reshape(9, -1).T
    t_star = np.abs([(s * d).mean() / (s * d).std(ddof=1) for s in flips])
    expected = np.mean(t_star >= t * (1 - 1e-9))
    assert confidence_set_p_values(loss)[1] == pytest.approx(expected)


def test_clearly_worse_rows_leave_and_equal_rows_stay():
    rng = np.random.default_rng(0)
    shared = rng.gamma(4.0, 0.25, 40)
    loss = np.vstack([shared + 0.01 * rng.normal(size=40) for _ in range(3)] + [shared * 2, shared * 3])
    p = confidence_set_p_values(loss)
    assert np.all(p[:3] > 0.05) and np.all(p[3:] <= 0.05)
    assert p[4] <= p[3]  # the worst leaves first; MCS p-values grow along the elimination


def test_missing_rows_and_repeats():
    loss = np.array([[1.0, 2.0, np.nan, 4.0], [np.nan] * 4, [1.5, 2.5, 3.5, np.nan]])
    p = confidence_set_p_values(loss)
    assert np.isnan(p[1]) and p[0] == 1.0 and 0 < p[2] <= 1
    assert np.isnan(confidence_set_p_values(np.full((2, 3), np.nan))).all()
    assert confidence_set_p_values(np.array([[1.0, 2.0]])).tolist() == [1.0]


def test_the_same_rows_in_any_order_give_the_same_p_values():
    """Seeded from the data (many repeats: random flips), not from the row order or a global seed."""
    rng = np.random.default_rng(3)
    loss = rng.gamma(2.0, 1.0, 60) + rng.normal(0, 0.3, (4, 60))
    loss[3] += 0.25
    p = confidence_set_p_values(loss)
    assert np.array_equal(confidence_set_p_values(loss), p)
    perm = [2, 0, 3, 1]
    assert np.array_equal(confidence_set_p_values(loss[perm]), p[perm])
    assert data_seed(loss) == data_seed(loss[perm]) != data_seed(loss + 1e-9)


def test_a_nearly_constant_difference_never_goes_below_the_smallest_p():
    """t^2 near infinity is sensitive to the summation order; the enumerated test reads the
    observed statistic from its own all-ones flip, so p stays exactly 2 / 2^R."""
    base = np.linspace(1.0, 3.0, 8)
    p = confidence_set_p_values(np.vstack([base, base + 0.5 + 1e-13 * np.arange(8)]))
    assert p[1] == smallest_p(8)
