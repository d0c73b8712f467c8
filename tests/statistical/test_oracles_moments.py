"""Unbiasedness and the variance formula of every oracle on both paths (docs/algorithms.md §8.2), and the
issue's full-domain MSE check.

B1: d = 64, n = 20,000, a fixed Dirichlet(0.3) histogram, eps in {0.5, 1, 4}, T = 400 trials through
``ldpbench.engine.simulate.simulate`` (the engine's own code path). Pass: max |z| <= 5.5; |R - 1| <= 0.07
with R the mean ratio of sample variance to (V-exact); every per-value ratio inside the chi-square
quantiles at 1e-7 ([0.674, 1.413] for T = 400). The per-user paths of OUE and OLH are O(n d), so they
run at d = 32, n = 5,000 (the bound of docs/algorithms.md §8.2 for OLH); with d = 32 the variance-ratio tolerance is
the same 7.8 sigma, 7.8 * sqrt(2 / (399 * 32)) = 0.098. Seeds come from the ``ldpbench_rng``
fixture (``--ldpbench-seed=N`` re-runs with other seeds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.engine.simulate import simulate
from ldpbench.testing.stats import (
    chi2_variance_bounds,
    mean_test,
    per_value_variance_test,
    variance_ratio_test,
    z_test,
)
from ldpbench_plugins.oracles import _hadamard
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE

ORACLES = {"grr": GRR, "oue": OUE, "olh": OLH, "hr": HR}
EPSILONS = (0.5, 1.0, 4.0)
T = 400


def population(d: int, n: int) -> np.ndarray:
    """The fixed Dirichlet(0.3) histogram of docs/algorithms.md §8.2 (fixed: the truth is not what varies)."""
    rng = np.random.default_rng(np.random.SeedSequence([2024, d, n]))
    return rng.multinomial(n, rng.dirichlet(np.full(d, 0.3)))


def b1_sizes(name: str, path: str) -> tuple[int, int]:
    return (32, 5_000) if path == "per-user" and name in ("oue", "olh") else (64, 20_000)


def trials(oracle, counts, rng, path, t):
    return np.array([simulate(oracle, counts, rng, path).frequencies for _ in range(t)])


def test_b1_thresholds_are_the_documented_ones():
    lo, hi = chi2_variance_bounds(400)
    assert (round(lo, 3), round(hi, 3)) == (0.674, 1.413)
    assert 7.8 * math.sqrt(2 / (399 * 64)) == pytest.approx(0.069, abs=5e-4)


@pytest.mark.parametrize("path", ["aggregate", "per-user"])
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_b1_unbiased_with_the_exact_variance(name, path, ldpbench_rng):
    d, n = b1_sizes(name, path)
    counts = population(d, n)
    f = counts / n
    for eps in EPSILONS:
        oracle = ORACLES[name](d=d, epsilon=eps)
        if name == "hr" and path == "aggregate":
            assert not _hadamard.use_per_user(n, d, oracle.bits), "B1 must exercise HR's splitting sampler"
        est = trials(oracle, counts, ldpbench_rng, path, T)
        var = oracle.variance(n, f)
        where = f", {name} {path} eps={eps}"
        z_test(est, f, var, label=where).check()
        variance_ratio_test(est, var, tol=0.07 if d >= 64 else None, label=where).check()
        per_value_variance_test(est, var, label=where).check()


def test_b1_a_missing_f_term_would_fail():
    """The design can fail: at eps = 4 OUE's f-term (coefficient 1) dwarfs the constant 0.076."""
    d, n = 64, 20_000
    counts = population(d, n)
    oue = OUE(d=d, epsilon=4.0)
    exact = oue.variance(n, counts / n)
    assert np.mean(exact / oue.noise_variance(n)) > 1 + 2 * 0.07


def test_b5_hr_has_the_constants_and_variance_of_olh_with_two_buckets():
    for eps in EPSILONS:
        hr, olh = HR(d=64, epsilon=eps), OLH(d=64, epsilon=eps, g=2)
        assert hr.p_star == pytest.approx(olh.p_star, rel=1e-15) and hr.q_star == olh.q_star == 0.5
        f = population(64, 20_000) / 20_000
        np.testing.assert_allclose(hr.variance(20_000, f), olh.variance(20_000, f), rtol=1e-14)


# ----------------------------------------------------------------------------------------------
# The issue's check: full-domain MSE of the unprocessed estimate
# ----------------------------------------------------------------------------------------------

ISSUE_D, ISSUE_N = 256, 20_000


def expected_mse(p: float, q: float, d: int, n: int) -> float:
    """E[(1/d) sum_v (f_hat_v - f_v)^2] = (q(1-q) + (p-q)(1-p-q)/d) / (n (p-q)^2) (docs/algorithms.md §1.1)."""
    return (q * (1 - q) + (p - q) * (1 - p - q) / d) / (n * (p - q) ** 2)


def issue_repeats(name: str, path: str) -> int:
    """200 repeats on every path, as the issue sets it (the O(n d) per-user paths of OUE and OLH
    take ~15 s each at d = 256, n = 20,000)."""
    return 200


def mse_relative_sd(oracle, counts: np.ndarray, repeats: int) -> float:
    """Standard deviation of the mean of ``repeats`` per-trial MSEs, relative to its expectation.

    Per trial, MSE = (1/d) sum_v (f_hat_v - f_v)^2 with (nearly) independent normal errors, so
    Var(MSE) = (2/d^2) sum_v sigma_v^4.
    """
    n = int(counts.sum())
    var = oracle.variance(n, counts / n)
    return math.sqrt(2 * np.sum(var**2)) / np.sum(var) / math.sqrt(repeats)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_issue_mse_tolerance_is_at_least_five_sigma(name):
    counts = population(ISSUE_D, ISSUE_N)
    for eps in (1.0, 4.0):
        for path in ("aggregate", "per-user"):
            sd = mse_relative_sd(ORACLES[name](d=ISSUE_D, epsilon=eps), counts, issue_repeats(name, path))
            assert 0.10 >= 5 * sd, f"{name} {path} eps={eps}: 10% is only {0.10 / sd:.1f} sigma"


@pytest.mark.parametrize("path", ["aggregate", "per-user"])
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_issue_mse_matches_the_formula(name, path, ldpbench_rng):
    """d = 256, n = 20,000, eps in {1, 4}: the mean MSE is within 10% of the formula."""
    counts = population(ISSUE_D, ISSUE_N)
    f = counts / ISSUE_N
    repeats = issue_repeats(name, path)
    for eps in (1.0, 4.0):
        oracle = ORACLES[name](d=ISSUE_D, epsilon=eps)
        errors = trials(oracle, counts, ldpbench_rng, path, repeats) - f
        mse = (errors**2).mean(axis=1)
        want = expected_mse(oracle.p_star, oracle.q_star, ISSUE_D, ISSUE_N)
        assert abs(mse.mean() / want - 1) <= 0.10, (
            f"{name} {path} eps={eps}: mean MSE {mse.mean():.4g} vs formula {want:.4g} over {repeats} repeats"
        )
        # and, sharper, a 5.5-sigma test of the same mean (its sd from the exact variances)
        sd = mse_relative_sd(oracle, counts, 1) * want
        mean_test(mse, want, sd, label=f", {name} {path} eps={eps}").check()
