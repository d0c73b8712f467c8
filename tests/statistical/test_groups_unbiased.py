"""The combined estimate of personalized-budget groups is unbiased for the population frequencies.

Setting: a population of 10^6 users over d = 8 items; per repeat 80 + 40 + 8 users drawn afresh,
at eps = 0.5, 2 and inf (GRR, aggregate path); T = 4000 repeats. Each group's estimate has
sampling + noise variance Var_g = r (1 - r) / (n_g (p_g - q_g)^2), r = q_g + (p_g - q_g) f
(ldpbench.groups), and the combination's variance is sum_g w_g^2 Var_g (groups independent; the
without-replacement correction is O(n / population) = 1e-4).

- Z-test (acceptance §B): max_v |mean - f_v| / sqrt(Var_v / T) <= 5.5.
- Variance: per item, (T-1) s^2 / Var within chi^2_{T-1} quantiles at 1e-7 (about [0.85, 1.16]).

The contrast test shows the test has teeth: weighting each group by the inverse of the variance
evaluated at its **own** estimate (what the module docstring warns against) is detectably biased.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpbench.groups import group_weights, simulate_groups
from ldpbench.pluginmanager import build_plugins
from ldpbench.types import Population

PLUGINS = build_plugins()
POP = Population(np.array([400_000, 250_000, 150_000, 100_000, 50_000, 30_000, 15_000, 5_000]))
GROUPS = [(0.5, 80), (2.0, 40), (math.inf, 8)]
T = 4000


def _simulate(seed: int):
    d = POP.d
    make = lambda eps: PLUGINS.create("oracle", "grr", {}, d=d, epsilon=eps)  # noqa: E731
    rng = np.random.default_rng(seed)
    return [simulate_groups(make, POP, GROUPS, rng) for _ in range(T)]


@pytest.fixture(scope="module")
def runs():
    return _simulate(20240607)


def _predicted_variance(est) -> np.ndarray:
    f = POP.frequencies
    weights = group_weights(est.parts, POP.d)
    total = np.zeros(POP.d)
    for w, part in zip(weights, est.parts):
        p, q = part.p_star, part.q_star
        r = q + (p - q) * f
        total += w**2 * r * (1 - r) / (part.n * (p - q) ** 2)
    return total


def test_combined_estimate_is_unbiased(runs):
    est = np.array([e.frequencies for e in runs])
    var = _predicted_variance(runs[0])
    z = (est.mean(axis=0) - POP.frequencies) / np.sqrt(var / T)
    assert np.max(np.abs(z)) <= 5.5, z


def test_combined_variance_matches_sampling_plus_noise(runs):
    est = np.array([e.frequencies for e in runs])
    ratio = est.var(axis=0, ddof=1) / _predicted_variance(runs[0])
    lo = stats.chi2.ppf(1e-7, T - 1) / (T - 1)
    hi = stats.chi2.ppf(1 - 1e-7, T - 1) / (T - 1)
    assert np.all((ratio > lo) & (ratio < hi)), ratio


def test_weights_from_a_groups_own_estimate_would_be_biased(runs):
    # Contrast: per-item weights 1/Var_g evaluated at the group's own estimate f_g (clipped to
    # [1e-3, 1 - 1e-3]). A group whose estimate of a rare item came out low claims a small variance and
    # gets a large weight, so the combination is pulled down: the Z-test must catch it.
    f = POP.frequencies
    combos = []
    for e in runs:
        num = np.zeros(POP.d)
        den = np.zeros(POP.d)
        for part in e.parts:
            p, q = part.p_star, part.q_star
            own = np.clip(part.frequencies, 1e-3, 1 - 1e-3)
            r = q + (p - q) * own
            w = part.n * (p - q) ** 2 / (r * (1 - r))
            num += w * part.frequencies
            den += w
        combos.append(num / den)
    combos = np.array(combos)
    z = (combos.mean(axis=0) - f) / (combos.std(axis=0, ddof=1) / math.sqrt(T))
    assert np.max(np.abs(z)) > 8
