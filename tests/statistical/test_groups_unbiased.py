"""The combined estimate of personalized-budget groups is unbiased, with the predicted variance, for
every oracle (GRR, OUE, OLH, HR).

Setting: a population of 10^6 users over d = 8 items; per repeat 80 + 40 + 8 users drawn afresh,
at eps = 0.5, 2 and inf (aggregate path); T repeats per oracle (4000 for GRR, 3000 for the others,
to keep the file near 10 s on a busy machine). For a pure protocol ([W17]) with constants
(p_g, q_g), a user drawn at random from the population supports item v with probability
r = q_g + (p_g - q_g) f_v, so group g's estimate has variance (sampling + noise)
Var_g = r (1 - r) / (n_g (p_g - q_g)^2) (eps = inf: p = 1, q = 0, f (1 - f) / n_g), and the
combination sum_g w_g f_g has variance sum_g w_g^2 Var_g (groups are disjoint users; the
without-replacement correction is O(n / population) = 1e-4). ldpbench/engine/groups.py fixes the weights
at the reference f = 1/d: w_g proportional to 1 / Var_g(1/d).

The expected values here are computed **independently of ldpbench.engine.groups**: (p_g, q_g) from the
textbook constants of each oracle (docs/algorithms.md §1.2) and the weights from the formula above.

- Weights: the combination's recorded weights equal the inverse reference variances (rtol 1e-12),
  and every part carries its oracle's constants.
- Z-test (docs/algorithms.md §8.2): max_v |mean - f_v| / sqrt(Var_v / T) <= 5.5 (8 items x 4 oracles:
  a correct implementation fails with probability about 32 x 3.8e-8 = 1e-6).
- Variance: per item, (T-1) s^2 / Var within the chi^2_{T-1} quantiles at 1e-7 on each side
  ([0.888, 1.121] at T = 4000, [0.871, 1.140] at T = 3000; measured: max |z| <= 3.0 and ratios
  in [0.94, 1.04] for all four oracles).

The contrast test shows the Z-test has teeth: weighting each group by the inverse of the variance
evaluated at its **own** estimate (what the module docstring warns against) is detectably biased.
Combinations broken on purpose in a scratch copy of ldpbench/engine/groups.py failed the statistical
tests for every oracle they affect, even with the weight check left out: own-estimate weights
(Z-test, max |z| 8-27), un-normalised weights (Z-test, 60-230), the eps = inf group left out of the
sum, weights 1/sd instead of 1/var, and GRR's constants used for every oracle's weights (variance
test: largest ratios 1.6-12; the last one leaves GRR itself correct and fails OUE, OLH and HR).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats
from support import builtin_plugins

from ldpbench.engine.groups import simulate_groups
from ldpbench.types import Population

PLUGINS = builtin_plugins()
POP = Population(np.array([400_000, 250_000, 150_000, 100_000, 50_000, 30_000, 15_000, 5_000]))
GROUPS = [(0.5, 80), (2.0, 40), (math.inf, 8)]
ORACLES = ("grr", "oue", "olh", "hr")
REPEATS = {"grr": 4000, "oue": 3000, "olh": 3000, "hr": 3000}
SEEDS = {"grr": 20240607, "oue": 20240608, "olh": 20240609, "hr": 20240610}


def textbook_constants(oracle: str, eps: float, d: int) -> tuple[float, float]:
    """``(p*, q*)`` of a pure protocol (docs/algorithms.md §1.2); eps = inf sends the truth (1, 0)."""
    if math.isinf(eps):
        return 1.0, 0.0
    e = math.exp(eps)
    if oracle == "grr":
        return e / (e + d - 1), 1 / (e + d - 1)
    if oracle == "oue":
        return 0.5, 1 / (e + 1)
    if oracle == "olh":
        g = round(e) + 1  # the default range of ldpbench's OLH ([W20]'s olh.py)
        return e / (e + g - 1), 1 / g
    if oracle == "hr":
        return e / (e + 1), 0.5
    raise ValueError(oracle)


def group_variance(p: float, q: float, n: int, f: np.ndarray | float) -> np.ndarray | float:
    """Var of a group's estimate of f: r (1 - r) / (n (p - q)^2), r = q + (p - q) f."""
    r = q + (p - q) * f
    return r * (1 - r) / (n * (p - q) ** 2)


def expected_weights(oracle: str) -> np.ndarray:
    """Inverse-variance weights at the reference f = 1/d, normalised to sum to 1."""
    d = POP.d
    inv = np.array([1 / group_variance(*textbook_constants(oracle, eps, d), n, 1 / d) for eps, n in GROUPS])
    return inv / inv.sum()


def predicted_variance(oracle: str) -> np.ndarray:
    """sum_g w_g^2 Var_g(f_v) per item, at the true population frequencies."""
    f = POP.frequencies
    w = expected_weights(oracle)
    return sum(wg**2 * group_variance(*textbook_constants(oracle, eps, POP.d), n, f) for wg, (eps, n) in zip(w, GROUPS))


@functools.cache
def runs(oracle: str) -> list:
    """T combined estimates (aggregate path), each from users drawn afresh. Cached per oracle."""
    # One oracle per budget, built once: the repeats differ only in their users and reports.
    finite = [eps for eps, _ in GROUPS if math.isfinite(eps)]
    oracles = {eps: PLUGINS.create("oracle", oracle, {}, d=POP.d, epsilon=eps) for eps in finite}
    rng = np.random.default_rng(SEEDS[oracle])
    return [simulate_groups(oracles.__getitem__, POP, GROUPS, rng) for _ in range(REPEATS[oracle])]


def frequencies(oracle: str) -> np.ndarray:
    return np.array([e.frequencies for e in runs(oracle)])


@pytest.mark.parametrize("oracle", ORACLES)
def test_weights_are_the_inverse_reference_variances(oracle):
    est = runs(oracle)[0]
    for part, (eps, n) in zip(est.parts, GROUPS):
        assert part.n == n and part.epsilon == eps
        assert (part.p_star, part.q_star) == pytest.approx(textbook_constants(oracle, eps, POP.d), rel=1e-12)
    recorded = np.array([g["weight"] for g in est.info["groups"]])
    assert np.allclose(recorded, expected_weights(oracle), rtol=1e-12, atol=0)
    combined = sum(w * p.frequencies for w, p in zip(expected_weights(oracle), est.parts))
    assert np.allclose(est.frequencies, combined, rtol=0, atol=1e-12)


@pytest.mark.parametrize("oracle", ORACLES)
def test_combined_estimate_is_unbiased(oracle):
    est, T = frequencies(oracle), REPEATS[oracle]
    z = (est.mean(axis=0) - POP.frequencies) / np.sqrt(predicted_variance(oracle) / T)
    assert np.max(np.abs(z)) <= 5.5, z


@pytest.mark.parametrize("oracle", ORACLES)
def test_combined_variance_matches_sampling_plus_noise(oracle):
    est, T = frequencies(oracle), REPEATS[oracle]
    ratio = est.var(axis=0, ddof=1) / predicted_variance(oracle)
    lo = stats.chi2.ppf(1e-7, T - 1) / (T - 1)
    hi = stats.chi2.ppf(1 - 1e-7, T - 1) / (T - 1)
    assert np.all((ratio > lo) & (ratio < hi)), ratio


def test_weights_from_a_groups_own_estimate_would_be_biased():
    # Contrast: per-item weights 1/Var_g evaluated at the group's own estimate f_g (clipped to
    # [1e-3, 1 - 1e-3]). A group whose estimate of a rare item came out low claims a small variance and
    # gets a large weight, so the combination is pulled down: the Z-test must catch it.
    f, T = POP.frequencies, REPEATS["grr"]
    combos = []
    for e in runs("grr"):
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
