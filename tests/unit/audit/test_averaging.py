"""The averaging attack across rounds (ldpbench/audit/averaging.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.audit.averaging import averaging_attack, epsilon_lower_bound, guess

D, EPS = 8, 1.0
P = math.exp(EPS) / (math.exp(EPS) + D - 1)
KEEP = P - (1 - P) / (D - 1)  # GRR: keep w.p. KEEP, else uniform over all d


def _fresh(values, T, rng):
    """A fresh GRR report every round: T independent reports of each value."""
    kept = rng.binomial(T, KEEP, size=values.size)
    counts = rng.multinomial(T - kept, np.full(D, 1 / D))
    counts[np.arange(values.size), values] += kept
    return counts


def _memoized(values, T, rng):
    """GRR once, then that output repeated T times: the attack learns no more than one report."""
    out = np.where(rng.random(values.size) < KEEP, values, rng.integers(0, D, size=values.size))
    counts = np.zeros((values.size, D), dtype=np.int64)
    counts[np.arange(values.size), out] = T
    return counts


def test_the_bound_inverts_the_ldp_ceiling_on_guessing():
    s = math.exp(EPS) / (math.exp(EPS) + D - 1)
    assert epsilon_lower_bound(s, D) == pytest.approx(EPS)
    assert epsilon_lower_bound(1 / D, D) == 0.0 and epsilon_lower_bound(1.0, D) == math.inf


def test_ties_are_broken_at_random_and_a_strict_maximum_wins():
    rng = np.random.default_rng(0)
    assert (guess(np.array([[0, 3, 1]] * 5), rng) == 1).all()
    picks = guess(np.zeros((2000, 2)), rng)
    assert 900 < picks.sum() < 1100  # Binomial(2000, 1/2): sd 22


def test_fresh_reports_leak_more_with_rounds_memoized_ones_do_not():
    """4000 users per point; alpha = 1e-3: the memoized bound exceeds EPS with probability <= 1e-3."""
    rng = np.random.default_rng(11)
    fresh = averaging_attack(_fresh, D, [1, 64], 4000, rng, alpha=1e-3)
    memo = averaging_attack(_memoized, D, [1, 64], 4000, rng, alpha=1e-3)
    assert fresh[1].epsilon_lower > 3 * EPS  # success ~0.96 at T = 64
    assert fresh[1].success > fresh[0].success + 0.3
    assert all(pt.epsilon_lower <= EPS for pt in memo)
    assert abs(memo[1].success - P) < 0.03  # ~0.28, sd 0.007
