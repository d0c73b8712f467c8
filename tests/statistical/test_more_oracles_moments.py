"""SS, SUE, BLH and ADP: unbiasedness and the variance formula by repeated simulation.

Quick tier: a small domain (d = 8, n = 4,000, T = 400 trials) on the aggregate path, where ADP runs
GRR at eps = 1 and OUE at eps = 0.5: max |z| <= 5.5 and the mean variance ratio within 7.8 sigma
(``ldpbench.testing.stats``).

Slow tier, the issue's check: d = 256, eps in {1, 4}, on both paths, the mean over repeats of the
full-domain MSE is within 10% of the oracle's own variance formula ``mean_v variance(n, f)_v``. Why
10% separates right from wrong: per repeat, ``MSE = (1/d) sum_v e_v^2`` with errors e_v of variance
sigma_v^2 that are close to normal and, for these oracles, correlated across items by O(1/d) at most
(each user's report touches the item counts through p* and q*; SS's fixed subset size gives
correlation about -1/(d-1)). Then ``Var(MSE) = (2/d^2) sum_{v,w} Cov(e_v, e_w)^2 ~ (2/d^2) sum_v
sigma_v^4 (1 + O(1))``, so the relative standard error of the mean over R = 200 repeats is about
``sqrt(2 / d) / sqrt(R) = 0.0063``: 10% is ~16 sigma (computed per case from the exact variances
and asserted >= 5 sigma below). A q* off by 10% biases every estimate by ``0.1 q* / (p* - q*)``,
a bias whose square alone is many times the variance; the 5.5-sigma mean test beside it is
sharper still.

Beside the MSE, every estimate is checked item by item (``tests/oracle_moments.py``): max |z| of the
mean errors, their chi-square ``sum_v z_v^2`` and the mean ratio of sample variance to the formula,
each at false-alarm probability 1e-7. The chi-square sees a bias sqrt(R) times better than the MSE
does, which lets the per-user path, O(n d) per repeat, run with n = 2,000 users instead of the
aggregate path's 20,000 (200 repeats on both). Against a wrong variance the MSE and the variance
ratio lose nothing: their relative standard errors depend on d and the repeats, not on n. Against a
wrong perturb, measured by planting errors in the oracles' perturb (a scratch script, the tests' own
seeds; before: the MSE mean test at n = 20,000, after: this design): SUE's own bit at 0.9 p at
eps = 4, MSE z = 15.7 before, chi-square X = 734 after (limit 391.5); SS including the own item w.p.
0.9 p* at eps = 4, z = 24.4 before, X = 771 after; BLH with a hash seed shared by two users (no bias,
correlated users), z = 30.8 (eps = 1) before, R = 1.19 (30 standard deviations) after. At eps = 1
both designs miss the first two (z about 3). :func:`test_the_per_user_design_catches_a_wrong_perturb`
keeps the design honest.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle_moments import chi2_miss_probability, per_item_checks, pure_protocol_moments, trials

from ldpbench.testing.stats import StatResult, mean_test, variance_ratio_test, z_test
from ldpbench_plugins.oracles.adp import Adaptive
from ldpbench_plugins.oracles.blh import BLH
from ldpbench_plugins.oracles.ss import SubsetSelection
from ldpbench_plugins.oracles.sue import SUE

ORACLES = {"ss": SubsetSelection, "sue": SUE, "blh": BLH, "adp": Adaptive}
ISSUE_D, ISSUE_N, ISSUE_REPEATS = 256, 20_000, 200
#: (users, repeats) of the MSE check on each path: the per-user path costs O(n d) per repeat and
#: runs with fewer users (module docstring).
SIZES = {"aggregate": (ISSUE_N, ISSUE_REPEATS), "per-user": (2_000, ISSUE_REPEATS)}


def population(d: int, n: int) -> np.ndarray:
    """A fixed Dirichlet(0.3) histogram (fixed: the truth is not what varies)."""
    rng = np.random.default_rng(np.random.SeedSequence([2024, d, n]))
    return rng.multinomial(n, rng.dirichlet(np.full(d, 0.3)))


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_unbiased_with_the_exact_variance_on_a_small_domain(name, ldpbench_rng):
    d, n, t = 8, 4_000, 400
    counts = population(d, n)
    f = counts / n
    for eps in (0.5, 1.0, 4.0):
        oracle = ORACLES[name](d=d, epsilon=eps)
        est = trials(oracle, counts, ldpbench_rng, "aggregate", t)
        var = oracle.variance(n, f)
        where = f", {name} aggregate eps={eps}"
        z_test(est, f, var, label=where).check()
        variance_ratio_test(est, var, label=where).check()


def test_adp_runs_both_delegates_in_the_small_domain_test():
    assert {Adaptive(d=8, epsilon=eps).chosen for eps in (0.5, 1.0, 4.0)} == {"grr", "oue"}


def mse_relative_sd(oracle, counts: np.ndarray, repeats: int) -> float:
    """Standard deviation of the mean of ``repeats`` per-trial MSEs relative to its expectation,
    for independent normal errors: ``sqrt(2 sum_v sigma_v^4) / sum_v sigma_v^2 / sqrt(repeats)``."""
    n = int(counts.sum())
    var = oracle.variance(n, counts / n)
    return math.sqrt(2 * np.sum(var**2)) / np.sum(var) / math.sqrt(repeats)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_the_ten_percent_tolerance_is_at_least_five_sigma(name):
    for path, (n, repeats) in SIZES.items():
        counts = population(ISSUE_D, n)
        for eps in (1.0, 4.0):
            sd = mse_relative_sd(ORACLES[name](d=ISSUE_D, epsilon=eps), counts, repeats)
            assert 0.10 >= 5 * sd, f"{name} {path} eps={eps}: 10% is only {0.10 / sd:.1f} sigma"


def moment_checks(oracle, counts: np.ndarray, rng: np.random.Generator, path: str, repeats: int) -> list[StatResult]:
    """The issue's MSE checks and the per-item checks of one oracle on one path (module docstring)."""
    n = int(counts.sum())
    f = counts / n
    est = trials(oracle, counts, rng, path, repeats)
    var = oracle.variance(n, f)
    where = f", {oracle.name} {path} eps={oracle.epsilon:g}"
    mse = ((est - f) ** 2).mean(axis=1)
    want = float(var.mean())
    ratio = float(mse.mean()) / want
    ten_percent = StatResult(
        f"mean MSE within 10% of the formula{where}",
        abs(ratio - 1) <= 0.10,
        ratio,
        f"mean MSE {mse.mean():.4g} vs formula {want:.4g} over {repeats} repeats",
    )
    sd = mse_relative_sd(oracle, counts, 1) * want
    return [ten_percent, mean_test(mse, want, sd, label=where), *per_item_checks(est, f, var, label=where)]


@pytest.mark.parametrize("path", ["aggregate", "per-user"])
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_mse_matches_the_variance_formula(name, path, ldpbench_rng):
    """d = 256, eps in {1, 4}, 200 repeats (n = 20,000 aggregate, 2,000 per user): mean MSE within 10%
    of mean_v variance and the per-item checks."""
    n, repeats = SIZES[path]
    counts = population(ISSUE_D, n)
    for eps in (1.0, 4.0):
        for result in moment_checks(ORACLES[name](d=ISSUE_D, epsilon=eps), counts, ldpbench_rng, path, repeats):
            result.check()


def test_the_per_user_design_catches_a_wrong_perturb():
    """SUE keeping its own bit at 0.9 p* and SS including the own item at 0.9 p* (the estimator
    unchanged) pass the chi-square of the means of the per-user design with probability below 1e-9
    (exact noncentral chi-square, :func:`oracle_moments.chi2_miss_probability`)."""
    n, repeats = SIZES["per-user"]
    counts = population(ISSUE_D, n)
    for name in ("sue", "ss"):
        oracle = ORACLES[name](d=ISSUE_D, epsilon=4.0)
        p, q = oracle.p_star, oracle.q_star
        p_wrong = 0.9 * p
        if name == "ss":  # the other items fill the subset: q moves with p
            k = oracle.subset_size
            q_wrong = (p_wrong * (k - 1) + (1 - p_wrong) * k) / (ISSUE_D - 1)
        else:
            q_wrong = q
        bias, var = pure_protocol_moments(counts, p_wrong, q_wrong, p, q)
        miss = chi2_miss_probability(bias, var, oracle.variance(n, counts / n), repeats)
        assert miss <= 1e-9, f"{name}: a perturb with p = 0.9 p* passes with probability {miss:.2g}"
