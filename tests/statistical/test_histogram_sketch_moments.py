"""SHE, THE, CMS and HCMS against their theory by repeated simulation (fixed seeds).

**The issue's MSE check.** d = 256, eps in {1, 4}, 200 repeats on both paths (n = 20,000 on the
aggregate path, 2,000 on the per-user path: see below): the mean over repeats of the full-domain
MSE ``(1/d) sum_v (f_hat_v - f_v)^2`` must lie within 10% of the oracle's own formula, ``(1/d) sum_v variance(n, f)_v`` (the expected MSE of an unbiased estimate).

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

**Per item, and why the per-user path runs with n = 2,000.** Beside the MSE, every estimate is checked
item by item (``tests/oracle_moments.py``): max |z| of the mean errors, their chi-square
``sum_v z_v^2`` and the mean ratio R of sample variance to the formula, each at false-alarm
probability 1e-7. The chi-square sees a bias sqrt(200) times better than the MSE at equal n, so the
per-user path, O(n d) per repeat (the faithful clients: m bits, a hash of the domain or d Laplace
draws per user), runs with n = 2,000 users. The MSE and R lose nothing against a wrong variance:
their relative standard errors depend on d and the repeats, not on n; R is not inflated 1.9x, and
it need not be: SHE's and THE's coordinates are independent and CMS's and HCMS's items correlate by
O(1/m). Measured by planting errors in the perturb (a scratch script, the tests' own seeds; before:
the MSE mean test at n = 20,000, after: this design): HCMS keeping its sign at eps/2, MSE z = 6.7
(eps = 1) and 5.7 (eps = 4) before (expected 6.0 and 5.3: missed at both w.p. 0.18), chi-square
X = 502 and 540 after (limit 391.5; missed w.p. 1e-12); CMS keeping the own bucket's bit at 0.9 p at
eps = 4, z = 9.3 before, X = 845 after; THE's Laplace scale 1% low at eps = 1, z = 9.4 before,
X = 883 after; SHE's Laplace scale 5% low (variance 0.9025x, no bias) at eps = 1, z = -8.6 before,
R = 0.895 after (16.8 of its standard deviations; limit 7.8; the MSE's z = -8.9 is still there).
:func:`test_the_per_user_design_catches_a_wrong_perturb` keeps the design honest.

**Quick checks.** Unbiasedness on a small domain with the aggregate path (max |z| <= 5.5 over the
items), Apple's estimator biased exactly as predicted given its family (and in the predicted
direction), and SHE's exact aggregate law against the per-user sums.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle_moments import chi2_miss_probability, per_item_checks, pure_protocol_moments, trials
from scipy import stats as st

from ldpbench.testing.stats import StatResult, mean_test, z_test
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS
from ldpbench_plugins.oracles.she import SHE
from ldpbench_plugins.oracles.the import THE

ORACLES = {"she": SHE, "the": THE, "cms": CMS, "hcms": HCMS}
ISSUE_D, ISSUE_N, REPEATS = 256, 20_000, 200
#: (users, repeats) of the MSE check on each path: the per-user path costs O(n d) per repeat and
#: runs with fewer users (module docstring).
SIZES = {"aggregate": (ISSUE_N, REPEATS), "per-user": (2_000, REPEATS)}


def population(d: int, n: int, concentration: float = 0.3) -> np.ndarray:
    """A fixed Dirichlet histogram (the truth does not vary between repeats)."""
    rng = np.random.default_rng(np.random.SeedSequence([2024, d, n]))
    return rng.multinomial(n, rng.dirichlet(np.full(d, concentration)))


def relative_sd_of_mean_mse(variance: np.ndarray, repeats: int) -> float:
    """sd of the mean of ``repeats`` MSEs relative to its expectation, independent normal errors."""
    return math.sqrt(2 * np.sum(variance**2)) / np.sum(variance) / math.sqrt(repeats)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_ten_percent_is_many_standard_deviations(name):
    for path, (n, repeats) in SIZES.items():
        counts = population(ISSUE_D, n)
        for eps in (1.0, 4.0):
            var = ORACLES[name](d=ISSUE_D, epsilon=eps).variance(n, counts / n)
            sd = relative_sd_of_mean_mse(var, repeats)
            # 1.9x: the inflation an all-pairs error correlation of 0.1 would cause (module docstring)
            assert 0.10 >= 5 * 1.9 * sd, f"{name} {path} eps={eps}: 10% is only {0.10 / sd:.1f} sigma"


def mse_checks(oracle, counts: np.ndarray, rng: np.random.Generator, path: str, repeats: int) -> list[StatResult]:
    """The issue's MSE checks and the per-item checks of one oracle on one path (module docstring)."""
    n = int(counts.sum())
    f = counts / n
    est = trials(oracle, counts, rng, path, repeats)
    var = oracle.variance(n, f)
    where = f", {oracle.name} {path} eps={oracle.epsilon:g}"
    mse = ((est - f) ** 2).mean(axis=1)
    want = float(np.mean(var))
    ratio = float(mse.mean()) / want
    ten_percent = StatResult(
        f"mean MSE within 10% of the formula{where}",
        abs(ratio - 1) <= 0.10,
        ratio,
        f"mean MSE {mse.mean():.4g} vs formula {want:.4g} over {repeats} repeats",
    )
    sd = 1.9 * relative_sd_of_mean_mse(var, 1) * want
    return [ten_percent, mean_test(mse, want, sd, label=where), *per_item_checks(est, f, var, label=where)]


@pytest.mark.parametrize("path", ["aggregate", "per-user"])
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_mse_matches_the_variance_formula(name, path, ldpbench_rng):
    """d = 256, eps in {1, 4}, 200 repeats (n = 20,000 aggregate, 2,000 per user): mean MSE within 10%
    of mean(variance(n, f)), and the per-item checks."""
    n, repeats = SIZES[path]
    counts = population(ISSUE_D, n)
    for eps in (1.0, 4.0):
        for result in mse_checks(ORACLES[name](d=ISSUE_D, epsilon=eps), counts, ldpbench_rng, path, repeats):
            result.check()


def test_the_per_user_design_catches_a_wrong_perturb():
    """The per-user test passes with probability below 1e-9 an HCMS that keeps its sign at eps/2
    (the chi-square of the means, exact noncentral law, missed at both eps) and a SHE whose Laplace
    scale is 5% low (variance 0.9025x, no bias: the variance ratio R, normal with sd
    sqrt(2 / (199 d)) x 0.9025, missed at either eps)."""
    n, repeats = SIZES["per-user"]
    counts = population(ISSUE_D, n)
    f = counts / n
    miss = 1.0
    for eps in (1.0, 4.0):
        hcms = HCMS(d=ISSUE_D, epsilon=eps)
        # the sign kept w.p. `kept`: another item shares the user's bucket w.p. 1/m, else agrees w.p. 1/2
        kept = 1 / (1 + math.exp(-eps / 2))
        bias, var = pure_protocol_moments(counts, kept, 0.5 + (kept - 0.5) / hcms.buckets, hcms.p_star, hcms.q_star)
        miss *= chi2_miss_probability(bias, var, hcms.variance(n, f), repeats)
    assert miss <= 1e-9, f"hcms: the sign kept at eps/2 passes with probability {miss:.2g}"
    sd = math.sqrt(2 / ((repeats - 1) * ISSUE_D))  # of R for a correct oracle; x 0.9025 for SHE's
    miss = st.norm.sf((1 - 7.8 * sd - 0.9025) / (0.9025 * sd))
    assert miss <= 1e-9, f"she: a Laplace scale 5% low passes with probability {miss:.2g}"


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
