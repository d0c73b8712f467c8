"""Blender's client side ([A17] LocalAlg; plugins/protocols/_blender_client.py): constants, the
exact law and its privacy, the denoising algebra and the exact variance (docs/algorithms.md §8.6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import HL_PARENTS, W_PARENTS, head_list, wildcard_head_list

from ldpbench_plugins.protocols._blender_client import (
    _coefficients,
    estimate_client,
    local_alg_constants,
    report_matrix,
)


@pytest.mark.parametrize("eps,delta,f_c", [(4, 1e-5, 0.85), (1, 1e-7, 0.5), (8, 1e-3, 0.95)])
def test_truthful_probabilities_make_the_constraints_tight(eps, delta, f_c):
    c = local_alg_constants(eps, delta, 1, f_c, head_list())
    assert c.eps_q == pytest.approx(f_c * eps) and c.eps_q + c.eps_u == pytest.approx(eps)
    assert c.delta_q + c.delta_u == pytest.approx(delta)
    # t = e^{eps_Q} (1 - t)/(k - 1) + delta_Q/2 exactly (A14), and the same for every t_q: up to
    # the round-off of evaluating the right side, e^{eps} times the machine epsilon of 1 - t.
    assert c.t == pytest.approx(math.exp(c.eps_q) * (1 - c.t) / (c.k - 1) + c.delta_q / 2, rel=0, abs=_ulps(c.eps_q))
    real = c.k_q > 1
    rhs = np.exp(c.eps_u) * (1 - c.t_q[real]) / (c.k_q[real] - 1) + c.delta_u / 2
    np.testing.assert_allclose(c.t_q[real], rhs, rtol=0, atol=_ulps(c.eps_u))
    assert c.t_q[~real] == pytest.approx(1.0)
    # the definition as printed in [A17] Fig. 6
    e = math.exp(c.eps_q)
    assert c.t == pytest.approx((e + c.delta_q / 2 * (c.k - 1)) / (e + c.k - 1), rel=1e-14)


def _ulps(eps: float) -> float:
    """Round-off allowance for comparing probabilities with e^eps times a difference near 1."""
    return 8 * math.exp(eps) * np.finfo(float).eps


def test_constants_do_not_overflow_for_huge_epsilon():
    c = local_alg_constants(2000.0, 1e-5, 1, 0.85, head_list())
    assert c.t == 1.0 and np.all(c.t_q == 1.0)


@pytest.mark.parametrize("eps,delta,f_c", [(4, 1e-5, 0.85), (1, 1e-2, 0.7), (0.5, 0.05, 0.5)])
def test_local_alg_law_satisfies_eps_delta_exactly(eps, delta, f_c):
    hl = head_list()
    c = local_alg_constants(eps, delta, 1, f_c, hl)
    P = report_matrix(hl, c)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert P.min() > 0
    # Pointwise: P(o | r) <= e^eps P(o | r') + delta for every pair of inputs and output.
    ratio_slack = P[:, None, :] - math.exp(eps) * P[None, :, :]
    tol = _ulps(eps)
    assert ratio_slack.max() <= delta + tol
    # Sets of outputs (the definition): sum_o max(0, P(o|r) - e^eps P(o|r')) <= delta.
    assert np.clip(ratio_slack, 0, None).sum(axis=2).max() <= delta + tol


@pytest.mark.parametrize("eps,delta,f_c", [(4, 1e-5, 0.85), (1, 1e-2, 0.7)])
def test_query_and_url_stages_satisfy_their_own_budgets(eps, delta, f_c):
    hl = head_list()
    c = local_alg_constants(eps, delta, 1, f_c, hl)
    P = report_matrix(hl, c)
    j = hl.query_of_slot
    # Query stage: the reported query's law depends on the true query only.
    Q = np.stack([np.bincount(j, weights=row, minlength=hl.k) for row in P])
    for s in range(hl.n_slots):
        np.testing.assert_allclose(Q[s], Q[hl.offsets[j[s]]], rtol=0, atol=1e-15)
    Qj = Q[hl.offsets]
    slack = Qj[:, None, :] - math.exp(c.eps_q) * Qj[None, :, :]
    tol = _ulps(c.eps_q)
    # Tight: reporting one's own query against any other input meets delta_Q / 2 exactly.
    assert slack.max() == pytest.approx(c.delta_q / 2, abs=tol)
    assert np.clip(slack, 0, None).sum(axis=2).max() <= c.delta_q + tol
    # URL stage (query kept): within each query, reports given the true URL.
    for q in range(hl.k - 1):
        sl = np.arange(hl.offsets[q], hl.offsets[q] + hl.url_counts[q])
        U = P[np.ix_(sl, sl)] / c.t
        np.testing.assert_allclose(U.sum(axis=1), 1.0, atol=1e-14)
        slack = U[:, None, :] - math.exp(c.eps_u) * U[None, :, :]
        assert slack.max() == pytest.approx(c.delta_u / 2, abs=_ulps(c.eps_u))
        assert np.clip(slack, 0, None).sum(axis=2).max() <= c.delta_u + _ulps(c.eps_u)


def test_local_alg_with_delta_zero_is_k_rr_on_queries():
    hl = head_list()
    c = local_alg_constants(3.0, 0.0, 1, 1.0, hl)
    e = math.exp(3.0)
    assert c.t == pytest.approx(e / (e + hl.k - 1))
    np.testing.assert_allclose(c.t_q, 1 / hl.url_counts)  # no URL budget: the URL is uniform


# -- denoising algebra ---------------------------------------------------------------------------


def _slot_distribution(rng) -> np.ndarray:
    hl = head_list()
    f = rng.dirichlet(np.ones(HL_PARENTS.size))
    return np.bincount(hl.slot_of(HL_PARENTS), weights=f, minlength=hl.n_slots)


def test_denoising_inverts_the_expected_report_law():
    rng = np.random.default_rng(3)
    hl = head_list()
    c = local_alg_constants(4, 1e-5, 1, 0.85, hl)
    p = _slot_distribution(rng)
    r = p @ report_matrix(hl, c)
    big = 10**12  # a "histogram" equal to N r up to rounding, with N huge
    est = estimate_client(np.rint(r * big).astype(np.int64), hl, c)
    np.testing.assert_allclose(est.p_slot, p, atol=1e-9)
    np.testing.assert_allclose(est.p_query, np.bincount(hl.query_of_slot, weights=p), atol=1e-9)
    assert est.p_star == pytest.approx(p[np.append(hl.star_url_slots, hl.star_slot)].sum(), abs=1e-9)
    # The estimates sum to 1 exactly for any histogram (record level and query level).
    h = rng.integers(0, 50, hl.n_slots)
    e2 = estimate_client(h, hl, c)
    assert e2.p_slot.sum() == pytest.approx(1.0, abs=1e-12)
    assert e2.p_query.sum() == pytest.approx(1.0, abs=1e-12)


def test_exact_variance_equals_the_multinomial_covariance_of_the_linear_map():
    rng = np.random.default_rng(4)
    hl = head_list()
    c = local_alg_constants(4, 1e-5, 1, 0.85, hl)
    hist = rng.integers(5, 200, hl.n_slots)
    n = int(hist.sum())
    r = hist / n
    est = estimate_client(hist, hl, c, "exact")
    # The estimator is affine in r: build its matrix L column by column.
    a, b, _ = _coefficients(hl, c)
    j = hl.query_of_slot
    L = np.diag(a) + b[:, None] * (j[:, None] == j[None, :])
    cov = L @ (np.diag(r) - np.outer(r, r)) @ L.T / (n - 1)
    np.testing.assert_allclose(est.variance_slot, np.diag(cov), rtol=1e-10)
    star = np.append(hl.star_url_slots, hl.star_slot)
    w = L[star].sum(axis=0)
    assert est.variance_star == pytest.approx(w @ (np.diag(r) - np.outer(r, r)) @ w / (n - 1), rel=1e-10)
    Lq = (j[None, :] == np.arange(hl.k)[:, None]) / (c.t - c.e_q)
    np.testing.assert_allclose(
        est.variance_query, np.diag(Lq @ (np.diag(r) - np.outer(r, r)) @ Lq.T) / (n - 1), rtol=1e-10
    )


def test_printed_theorem5_covariance_term_does_not_shrink_with_n():
    hl = head_list()
    c = local_alg_constants(4, 1e-5, 1, 0.85, hl)
    r = np.full(hl.n_slots, 1 / hl.n_slots)
    small = estimate_client(np.rint(r * 1e4).astype(int), hl, c, "paper").variance_slot
    large = estimate_client(np.rint(r * 1e6).astype(int), hl, c, "paper").variance_slot
    exact = estimate_client(np.rint(r * 1e6).astype(int), hl, c, "exact").variance_slot
    rec = hl.record_slots
    # An honest variance shrinks like 1/N (x100 here); the printed one keeps an O(1) term.
    assert np.all(np.abs(large[rec]) > 10 * exact[rec])
    assert np.all(np.abs(small[rec] / large[rec]) < 2)


# -- (query, *) records: query-only data ----------------------------------------------------------


def test_denoising_and_variance_with_wildcard_records():
    rng = np.random.default_rng(8)
    hl = wildcard_head_list()
    c = local_alg_constants(4, 1e-5, 1, 0.85, hl)
    assert c.t_q[1] == 1.0  # q1 has one URL slot: its URL stage cannot lie
    f = rng.dirichlet(np.ones(W_PARENTS.size))
    p = np.bincount(hl.slot_of(W_PARENTS), weights=f, minlength=hl.n_slots)
    P = report_matrix(hl, c)
    big = 10**12
    est = estimate_client(np.rint(p @ P * big).astype(np.int64), hl, c)
    np.testing.assert_allclose(est.p_slot, p, atol=1e-9)
    # outside the listed records: <q2, *> and <*, *> only (<q0, *> and <q1, *> are listed records)
    assert est.p_star == pytest.approx(p[[4, 5]].sum(), abs=1e-9)
    assert est.p_star == pytest.approx(1 - p[hl.record_slots].sum(), abs=1e-9)
    # a one-slot query's record estimate is its query estimate, with the same variance
    assert est.p_slot[2] == est.p_query[1] and est.variance_slot[2] == est.variance_query[1]
    # variances: the multinomial covariance of the estimator's linear map
    hist = rng.integers(5, 200, hl.n_slots)
    n = int(hist.sum())
    r = hist / n
    e = estimate_client(hist, hl, c)
    a, b, _ = _coefficients(hl, c)
    j = hl.query_of_slot
    L = np.diag(a) + b[:, None] * (j[:, None] == j[None, :])
    cov = (np.diag(r) - np.outer(r, r)) / (n - 1)
    np.testing.assert_allclose(e.variance_slot, np.diag(L @ cov @ L.T), rtol=1e-10)
    w = L[hl.outside_slots].sum(axis=0)
    assert e.variance_star == pytest.approx(w @ cov @ w, rel=1e-10)
    # and for any histogram the listed records and everything outside them sum to 1
    assert e.p_star == pytest.approx(1 - e.p_slot[hl.record_slots].sum(), abs=1e-12)
