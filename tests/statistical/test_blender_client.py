"""Blender's client side by simulation (docs/algorithms.md §8.6): LocalAlg's report law, unbiasedness of
the denoiser, and its exact variance.

Head list: k = 4 queries (incl. <*,*>) with k_q = 4, 3, 5, 1; eps = 4, delta = 1e-5, f_C = 0.85.
Clients are i.i.d. draws from a random record distribution (the model of [A17] §3.3), so the
exact variance of docs/algorithms.md §5.4 applies.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpbench_plugins.protocols._blender_client import (
    estimate_client,
    local_alg,
    local_alg_constants,
    report_histogram_aggregate,
    report_histogram_per_user,
    report_matrix,
)
from ldpbench_plugins.protocols._blender_headlist import HeadList

PARENTS = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 0, 1, 3, 4])
HL = HeadList.build(np.arange(9), PARENTS)
C = local_alg_constants(4.0, 1e-5, 1, 0.85, HL)
P = report_matrix(HL, C)
N_C = 5000


def slot_distribution(seed: int) -> np.ndarray:
    f = np.random.default_rng(seed).dirichlet(np.ones(PARENTS.size))
    return np.bincount(HL.slot_of(PARENTS), weights=f, minlength=HL.n_slots)


def truth_vector(p: np.ndarray) -> np.ndarray:
    """Slot probabilities, then query probabilities, then the <*>-total."""
    star = p[np.append(HL.star_url_slots, HL.star_slot)].sum()
    return np.concatenate([p, np.bincount(HL.query_of_slot, weights=p, minlength=HL.k), [star]])


def exact_variance(p: np.ndarray, n: int) -> np.ndarray:
    """The exact variances: the plug-in formula evaluated at the true report law (N - 1 -> N)."""
    r = p @ P
    big = 10**13  # evaluate the plug-in form at r itself; it divides by (big - 1), rescale to n
    e = estimate_client(np.rint(r * big).astype(np.int64), HL, C)
    v = np.concatenate([e.variance_slot, e.variance_query, [e.variance_star]])
    return v * (big - 1) / n


def simulate(p: np.ndarray, trials: int, seed: int, per_user: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    estimates, variances = [], []
    for _ in range(trials):
        slot_counts = rng.multinomial(N_C, p)
        if per_user:
            hist = report_histogram_per_user(slot_counts, HL, C, rng)
        else:
            hist = report_histogram_aggregate(slot_counts, HL, C, rng)
        e = estimate_client(hist, HL, C)
        estimates.append(np.concatenate([e.p_slot, e.p_query, [e.p_star]]))
        variances.append(np.concatenate([e.variance_slot, e.variance_query, [e.variance_star]]))
    return np.array(estimates), np.array(variances)


@pytest.mark.parametrize("per_user,trials", [(False, 3000), (True, 300)])
def test_client_estimates_are_unbiased(per_user, trials):
    """F1: |z| <= 5.5 for every record, query and the wildcard total."""
    p = slot_distribution(11)
    est, _ = simulate(p, trials, seed=12 + per_user, per_user=per_user)
    var = exact_variance(p, N_C)
    z = (est.mean(axis=0) - truth_vector(p)) / np.sqrt(var / trials)
    assert np.abs(z).max() <= 5.5, z


def test_client_exact_variance_matches_simulation():
    """F2: empirical variance / exact variance within 1 +- 0.12 for every estimate (T = 3000);
    the plug-in variance estimate is unbiased for it (mean within 3%)."""
    p = slot_distribution(21)
    est, plug_in = simulate(p, 3000, seed=22, per_user=False)
    var = exact_variance(p, N_C)
    ratio = est.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) <= 0.12), ratio
    np.testing.assert_allclose(plug_in.mean(axis=0) / var, 1.0, atol=0.03)


def test_a_wrong_variance_constant_would_fail():
    """The F2 tolerance separates the exact variance from a plausible slip: Theorem 5's form
    without its covariance term (Var(r_qu)/A^2 + B^2 Var(p_q)/A^2, i.e. ignoring the covariance)."""
    p = slot_distribution(21)
    r = p @ P
    j = HL.query_of_slot
    rq = np.bincount(j, weights=r)[j]
    k_q, t_q = C.k_q[j].astype(float), C.t_q[j]
    real = k_q > 1
    kk = np.where(real, k_q, 2.0)
    A = C.t * (t_q - (1 - t_q) / (kk - 1))
    B = (1 - C.t) / ((C.k - 1) * kk) - C.t * (1 - t_q) / (kk - 1)
    den = C.t - C.e_q
    no_cov = (r * (1 - r) + B**2 * rq * (1 - rq) / den**2) / (A**2 * N_C)
    exact = exact_variance(p, N_C)[: HL.n_slots]
    assert np.max(np.abs(no_cov[real] / exact[real] - 1)) > 0.12


@pytest.mark.parametrize("slot", range(13))
def test_local_alg_and_aggregate_sampler_follow_the_report_law(slot):
    """Per input slot, LocalAlg's reports (100,000 clients) and the aggregate sampler's histogram
    are multinomial with probabilities P[slot]: Pearson chi-square p-value >= 1e-6."""
    rng = np.random.default_rng(100 + slot)
    n = 100_000
    expected = n * P[slot]
    counts = np.zeros(HL.n_slots, dtype=np.int64)
    counts[slot] = n
    for observed in (
        np.bincount(local_alg(np.full(n, slot), HL, C, rng), minlength=HL.n_slots),
        report_histogram_aggregate(counts, HL, C, rng),
    ):
        assert observed.sum() == n
        assert stats.chisquare(observed, expected).pvalue >= 1e-6


# A head list with wildcard records (query-only data, or (q, *) listed beside real URLs): queries
# q0 = {(q0, u), (q0, *)}, q1 = {(q1, *)} alone (k_q = 1), q2 = {(q2, u)} plus an empty <q2, *>.
HL_W = HeadList.build(
    np.array([0, 1, 3, 5]), np.array([0, 0, 0, 1, 1, 2, 3]), wildcard=np.array([False, True, True, False])
)
C_W = local_alg_constants(4.0, 1e-5, 1, 0.85, HL_W)
P_W = report_matrix(HL_W, C_W)


@pytest.mark.parametrize("slot", range(HL_W.n_slots))
def test_local_alg_follows_the_report_law_with_wildcard_records(slot):
    """LocalAlg on every client agrees with the exact law when a query's only URL slot is <q, *>
    (100,000 clients per input slot; Pearson chi-square p-value >= 1e-6)."""
    rng = np.random.default_rng(300 + slot)
    n = 100_000
    observed = np.bincount(local_alg(np.full(n, slot), HL_W, C_W, rng), minlength=HL_W.n_slots)
    assert stats.chisquare(observed, n * P_W[slot]).pvalue >= 1e-6


def test_client_record_estimate_of_a_query_star_record_is_unbiased():
    """A (q, *) record alone under its query: its estimate is the query's, unbiased (|z| <= 5.5
    over 2,000 trials of 5,000 clients), with the exact variance (empirical / exact within 0.15:
    the ratio's s.d. is sqrt(2/1999) = 0.032, so 4.7 sigma)."""
    rng = np.random.default_rng(41)
    parents = np.array([0, 0, 0, 1, 1, 2, 3])
    p = np.bincount(HL_W.slot_of(parents), weights=rng.dirichlet(np.ones(parents.size)), minlength=HL_W.n_slots)
    est = []
    for _ in range(2000):
        hist = report_histogram_aggregate(rng.multinomial(N_C, p), HL_W, C_W, rng)
        e = estimate_client(hist, HL_W, C_W)
        est.append(e.p_slot[HL_W.record_slots])
    est = np.array(est)
    r = p @ P_W
    big = 10**13
    exact = (
        estimate_client(np.rint(r * big).astype(np.int64), HL_W, C_W).variance_slot[HL_W.record_slots] * (big - 1) / N_C
    )
    z = (est.mean(axis=0) - p[HL_W.record_slots]) / np.sqrt(exact / est.shape[0])
    assert np.abs(z).max() <= 5.5, z
    ratio = est.var(axis=0, ddof=1) / exact
    assert np.all(np.abs(ratio - 1) <= 0.15), ratio
