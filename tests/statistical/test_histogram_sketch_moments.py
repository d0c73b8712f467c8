"""SHE, THE, CMS and HCMS against their theory by repeated simulation (fixed seeds).

**The issue's MSE check.** d = 256, n = 20,000, eps in {1, 4}, 200 repeats on both paths: the mean
over repeats of the full-domain MSE ``(1/d) sum_v (f_hat_v - f_v)^2`` must lie within 10% of the
oracle's own formula, ``(1/d) sum_v variance(n, f)_v`` (the expected MSE of an unbiased estimate).

Why 10% cannot fail by chance and a wrong oracle fails it: per repeat, the errors are (nearly)
normal with variances ``s_v^2``, so ``Var(MSE) = (2/d^2) (sum_v s_v^4 + sum_{v != w} Cov_vw^2)``.
SHE's coordinates and THE's bits are independent given the inputs (Cov = 0); in CMS and HCMS two
items share a user's bucket w.p. 1/m, which correlates their errors by O(1/m) = O(1e-3) and adds
at most ``d^2 rho^2 ~ 0.07`` to the first sum's ``d`` — negligible. Even an all-pairs correlation
of 0.1 would multiply the standard deviation by sqrt(1 + 255 * 0.01) = 1.9. With equal variances the
relative standard deviation of the mean over R = 200 repeats is ``sqrt(2/d) / sqrt(R) = 0.0063``, so
10% is 16 standard deviations (8 with the extreme correlation): a correct oracle passes with
overwhelming probability. A wrong constant fails: q* off by 10% shifts every estimate by
``0.1 q*/(p* - q*)`` (a squared bias of 1e-3 or more against MSEs of 1e-4..1e-3), and a variance
formula 10% too low fails the 10% bound. The sharper companion check (the same mean within 5.5
standard deviations, inflated 1.9x for the correlation above: 6.6% of the formula) also fails a
formula 10% too high; all were checked by breaking the code on purpose.

**Quick checks.** Unbiasedness on a small domain with the aggregate path (max |z| <= 5.5 over the
items), Apple's estimator biased exactly as predicted given its family (and in the predicted
direction), and SHE's exact aggregate law against the per-user sums.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from ldpbench.engine.simulate import simulate
from ldpbench.testing.stats import mean_test, z_test
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS
from ldpbench_plugins.oracles.she import SHE
from ldpbench_plugins.oracles.the import THE

ORACLES = {"she": SHE, "the": THE, "cms": CMS, "hcms": HCMS}
ISSUE_D, ISSUE_N, REPEATS = 256, 20_000, 200


def population(d: int, n: int, concentration: float = 0.3) -> np.ndarray:
    """A fixed Dirichlet histogram (the truth does not vary between repeats)."""
    rng = np.random.default_rng(np.random.SeedSequence([2024, d, n]))
    return rng.multinomial(n, rng.dirichlet(np.full(d, concentration)))


def trials(oracle, counts, rng, path, t):
    return np.array([simulate(oracle, counts, rng, path).frequencies for _ in range(t)])


def relative_sd_of_mean_mse(variance: np.ndarray, repeats: int) -> float:
    """sd of the mean of ``repeats`` MSEs relative to its expectation, independent normal errors."""
    return math.sqrt(2 * np.sum(variance**2)) / np.sum(variance) / math.sqrt(repeats)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_ten_percent_is_many_standard_deviations(name):
    counts = population(ISSUE_D, ISSUE_N)
    for eps in (1.0, 4.0):
        var = ORACLES[name](d=ISSUE_D, epsilon=eps).variance(ISSUE_N, counts / ISSUE_N)
        sd = relative_sd_of_mean_mse(var, REPEATS)
        # 1.9x: the inflation an all-pairs error correlation of 0.1 would cause (module docstring)
        assert 0.10 >= 5 * 1.9 * sd, f"{name} eps={eps}: 10% is only {0.10 / sd:.1f} sigma"


@pytest.mark.parametrize("path", ["aggregate", "per-user"])
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_mse_matches_the_variance_formula(name, path, ldpbench_rng):
    """d = 256, n = 20,000, eps in {1, 4}, 200 repeats: mean MSE within 10% of mean(variance(n, f))."""
    counts = population(ISSUE_D, ISSUE_N)
    f = counts / ISSUE_N
    for eps in (1.0, 4.0):
        oracle = ORACLES[name](d=ISSUE_D, epsilon=eps)
        mse = ((trials(oracle, counts, ldpbench_rng, path, REPEATS) - f) ** 2).mean(axis=1)
        want = float(np.mean(oracle.variance(ISSUE_N, f)))
        assert abs(mse.mean() / want - 1) <= 0.10, (
            f"{name} {path} eps={eps}: mean MSE {mse.mean():.4g} vs formula {want:.4g} over {REPEATS} repeats"
        )
        sd = 1.9 * relative_sd_of_mean_mse(oracle.variance(ISSUE_N, f), 1) * want
        mean_test(mse, want, sd, label=f", {name} {path} eps={eps}").check()


QUICK = {
    "she": ("she", {}),
    "the": ("the", {}),
    "the-theta": ("the", {"theta": 0.9}),
    "cms": ("cms", {"m": 16}),
    "hcms": ("hcms", {"m": 16}),
}


@pytest.mark.parametrize("label", sorted(QUICK))
def test_unbiased_on_a_small_domain_aggregate(label, ldpbench_rng):
    name, params = QUICK[label]
    d, n, t = 8, 2_000, 2_000
    counts = population(d, n, concentration=0.5)
    for eps in (0.5, 2.0):
        oracle = ORACLES[name](d=d, epsilon=eps, **params)
        est = trials(oracle, counts, ldpbench_rng, "aggregate", t)
        z_test(est, counts / n, oracle.variance(n, counts / n), label=f", {label} eps={eps}").check()


# ----------------------------------------------------------------------------------------------
# Apple's fixed family: biased as the theory predicts; the per-user hash is not
# ----------------------------------------------------------------------------------------------

APPLE = {"m": 8, "k": 2, "estimator": "apple"}


@pytest.mark.parametrize("cls", [CMS, HCMS], ids=["cms", "hcms"])
def test_apple_estimator_is_biased_as_predicted(cls, ldpbench_rng):
    """d = 64 items in m = 8 buckets under k = 2 functions: the mean estimate is the predicted
    biased mean (|z| <= 5.5), not the truth (|z| far above), and items whose predicted bias is large
    are off in its direction."""
    d, n, t, eps = 64, 20_000, 400, 2.0
    counts = population(d, n, concentration=0.2)
    f = counts / n
    oracle = cls(d=d, epsilon=eps, **APPLE)
    predicted = oracle.expected_estimate(f)
    var = oracle.variance(n, f)
    est = trials(oracle, counts, ldpbench_rng, "aggregate", t)
    z_test(est, predicted, var, label=f", {cls.name} apple vs its predicted mean").check()
    sd_mean = np.sqrt(var / t)
    bias = predicted - f
    big = np.abs(bias) > 8 * sd_mean
    assert big.sum() >= 5, "the setting must make Apple's bias large for several items"
    observed = est.mean(axis=0) - f
    assert np.all(np.sign(observed[big]) == np.sign(bias[big]))
    assert not z_test(est, f, var).passed, "Apple's estimator should be detectably biased here"
    # the size of the bias: observed against predicted, item by item, within 5.5 sd of the mean
    assert np.all(np.abs(observed[big] - bias[big]) <= 5.5 * sd_mean[big])


@pytest.mark.parametrize("cls", [CMS, HCMS], ids=["cms", "hcms"])
def test_per_user_hash_is_unbiased_where_apple_is_not(cls, ldpbench_rng):
    d, n, t, eps = 64, 20_000, 400, 2.0
    counts = population(d, n, concentration=0.2)
    f = counts / n
    oracle = cls(d=d, epsilon=eps, m=8)
    est = trials(oracle, counts, ldpbench_rng, "aggregate", t)
    z_test(est, f, oracle.variance(n, f), label=f", {cls.name} unbiased").check()


# ----------------------------------------------------------------------------------------------
# SHE's aggregate path has the exact law of the per-user sums
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("users", [1, 3])
def test_she_aggregate_sums_have_the_per_user_law(users, ldpbench_rng):
    """A Gamma difference, not a normal approximation: with 1 or 3 users the sums are far from
    normal, and a two-sample Kolmogorov-Smirnov test of 20,000 draws per path tells them apart
    (a normal draw of the same variance fails it; see the report)."""
    d, draws, eps = 4, 20_000, 1.0
    counts = np.zeros(d, dtype=np.int64)
    counts[0] = users
    oracle = SHE(d=d, epsilon=eps)
    agg = np.array([oracle.sample_support_counts(counts, ldpbench_rng) for _ in range(draws)])
    values = np.repeat(np.arange(d), counts)
    per_user = oracle.perturb(np.tile(values, draws), ldpbench_rng).reshape(draws, users, d).sum(axis=1)
    for v in range(2):
        p = st.ks_2samp(agg[:, v], per_user[:, v]).pvalue
        assert p >= 1e-6, f"SHE aggregate vs per-user sums, {users} users, item {v}: KS p = {p:.2e}"
