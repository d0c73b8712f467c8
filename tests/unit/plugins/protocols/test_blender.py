"""Blender ([A17]): constants, LocalAlg's exact law and privacy, denoising algebra, blending,
the protocol's outputs and its privacy accounting (docs/algorithms.md §8.1, §8.6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.errors import ParamError
from ldpbench.types import Population
from ldpbench_plugins.protocols._blender_client import (
    _coefficients,
    estimate_client,
    local_alg_constants,
    report_matrix,
)
from ldpbench_plugins.protocols._blender_headlist import HeadList, create_head_list, threshold
from ldpbench_plugins.protocols._blender_optin import estimate_optin, optin_variance
from ldpbench_plugins.protocols.blender import Blender, blend, blend_weights

# A head list with k = 4 queries (incl. <*,*>) and k_q = 4, 3, 5, 1 (A14 / F1): queries 0, 1, 2 hold
# 3, 2 and 4 head-list records; records 9-12 are outside the list (two of them under listed queries).
PARENTS = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 0, 1, 3, 4])
HL_RECORDS = np.arange(9)


def head_list() -> HeadList:
    return HeadList.build(HL_RECORDS, PARENTS)


# -- constants (A14) -------------------------------------------------------------------------


def test_threshold_constants():
    assert threshold(4, 1e-5) == pytest.approx(6.75646, abs=5e-6)
    assert threshold(4, 1e-7) == pytest.approx(9.05905, abs=5e-6)
    # m_O = 1: tau = 1 - 2 ln(delta)/eps
    assert threshold(2.5, 1e-3) == pytest.approx(1 - 2 * math.log(1e-3) / 2.5, rel=1e-14)
    # general m_O: b_S = 2 m_O / eps, tau = b_S (ln(e^{eps/2} + m_O - 1) - ln delta)
    assert threshold(3, 1e-4, m_o=3) == pytest.approx(2 * 3 / 3 * (math.log(math.exp(1.5) + 2) - math.log(1e-4)))


def test_threshold_rejects_bad_budgets():
    with pytest.raises(ParamError):
        threshold(float("inf"), 1e-5)
    with pytest.raises(ParamError):
        threshold(4, 0.0)
    with pytest.raises(ParamError):
        threshold(4, 1.0)


@pytest.mark.parametrize("m_o", [1, 2, 5])
def test_threshold_is_at_least_m_o(m_o):
    # tau = m_O + b_S (ln(1 + (m_O - 1) e^{-eps/2}) - ln delta) >= m_O >= 1 whenever delta < 1, so
    # Fig. 3's "assert tau >= 1" cannot fire for valid parameters (the check stays, defensively).
    for eps in (0.01, 1, 4, 50):
        for delta in (1e-9, 1e-5, 0.5, 0.999999):
            assert threshold(eps, delta, m_o) >= m_o


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


# -- LocalAlg's exact law and its privacy (A14) -------------------------------------------------


def test_head_list_layout():
    hl = head_list()
    np.testing.assert_array_equal(hl.url_counts, [4, 3, 5, 1])
    assert hl.k == 4 and hl.n_slots == 13 and hl.star_slot == 12
    np.testing.assert_array_equal(hl.star_url_slots, [3, 6, 11])
    slot = hl.slot_of(PARENTS)
    np.testing.assert_array_equal(slot[:9], hl.record_slots)
    np.testing.assert_array_equal(slot[9:], [3, 6, 12, 12])  # <q0,*>, <q1,*>, <*,*>, <*,*>
    assert len(set(hl.record_slots.tolist())) == 9


def test_head_list_layout_in_list_order():
    parents = np.array([0, 0, 1, 2, 2, 2, 3])
    hl = HeadList.build(np.array([5, 0, 3, 1, 2]), parents)
    np.testing.assert_array_equal(hl.queries, [2, 0, 1])  # by first appearance
    np.testing.assert_array_equal(hl.record_slots, [0, 3, 1, 4, 6])
    np.testing.assert_array_equal(hl.slot_of(parents), [3, 4, 6, 1, 2, 0, 8])


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
    f = rng.dirichlet(np.ones(PARENTS.size))
    return np.bincount(hl.slot_of(PARENTS), weights=f, minlength=hl.n_slots)


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


# -- opt-in side ------------------------------------------------------------------------------


def test_create_head_list_considers_only_present_records():
    rng = np.random.default_rng(0)
    counts = np.zeros(1000, dtype=np.int64)
    counts[:10] = 100  # far above tau = 6.76 (b = 0.5)
    kept = create_head_list(counts, 4, 1e-5, 1, rng)
    np.testing.assert_array_equal(kept, np.arange(10))


def test_estimate_optin_cuts_to_m_and_folds_the_rest_into_star():
    rng = np.random.default_rng(1)
    t_counts = np.array([500, 300, 200, 100, 50, 0, 850])
    est = estimate_optin(t_counts, np.array([0, 1, 2, 3, 4]), 4, 1, 3, rng)
    np.testing.assert_array_equal(est.records, [0, 1, 2])
    assert est.n_t == 2000
    assert est.p.sum() + est.p_star == pytest.approx(1.0, abs=10 * 6 * 0.5 / 2000)
    assert est.p_star == pytest.approx(1000 / 2000, abs=5 * 3 * 0.5 / 2000)
    np.testing.assert_allclose(est.variance, optin_variance(est.p, 2000, 0.5))
    # Theorem 4 (Bessel-corrected), by hand for one value
    assert optin_variance(0.25, 2000, 0.5) == pytest.approx(0.25 * 0.75 / 1999 + 2 * 0.25 / (2000 * 1999))


# -- blending (Theorem 6) ---------------------------------------------------------------------


def test_blend_weight_minimizes_the_blended_variance():
    rng = np.random.default_rng(2)
    vo, vc = rng.uniform(1e-6, 1e-3, 50), rng.uniform(1e-6, 1e-3, 50)
    w = blend_weights(vo, vc)
    assert np.all((w >= 0) & (w <= 1))
    best = w**2 * vo + (1 - w) ** 2 * vc
    np.testing.assert_allclose(best, vo * vc / (vo + vc), rtol=1e-12)
    grid = np.linspace(0, 1, 1001)[:, None]
    assert np.all(best <= (grid**2 * vo + (1 - grid) ** 2 * vc).min(axis=0) + 1e-18)
    p, var, w2 = blend(np.full(50, 0.1), vo, np.full(50, 0.3), vc)
    np.testing.assert_allclose(p, w * 0.1 + (1 - w) * 0.3)
    np.testing.assert_allclose(var, best)
    # the more precise input gets the larger weight
    assert blend_weights(1e-6, 1e-3) > 0.99 and blend_weights(1e-3, 1e-6) < 0.01


# -- the protocol -----------------------------------------------------------------------------


def record_population(queries: int = 300, urls: int = 5, n: int = 400_000, seed: int = 0) -> Population:
    rng = np.random.default_rng(seed)
    pq = np.arange(1, queries + 1) ** -1.0
    pu = np.arange(1, urls + 1) ** -1.5
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    return Population(rng.multinomial(n, p), name="zipf-records", parents=np.repeat(np.arange(queries), urls))


def test_run_returns_three_estimates_on_one_head_list():
    pop = record_population()
    out = Blender(**_defaults(head_list_size=20)).run(pop, 4.0, np.random.default_rng(5))
    assert list(out) == ["opt-in", "client", "blended"]
    items = out["blended"].items
    assert 0 < items.size <= 20
    assert np.all(pop.counts[items] > 0)
    for label, est in out.items():
        np.testing.assert_array_equal(est.items, items)
        assert est.mechanism == f"blender:{label}" and est.epsilon == 4.0
        assert est.variance.shape == est.frequencies.shape
        info = est.info
        assert info["head_list_size"] == items.size and info["group"] == label
        assert len(info["item_query"]) == items.size
        np.testing.assert_array_equal(np.asarray(info["queries"])[info["item_query"]], pop.parents[items])
        assert len(info["query_frequencies"]) == len(info["queries"])
        # projected: non-negative, and with <*,*> sums to 1
        assert est.frequencies.min() >= 0
        assert est.frequencies.sum() + info["star"]["frequency"] == pytest.approx(1.0)
        assert sum(info["query_frequencies"]) + info["star_query"]["frequency"] == pytest.approx(1.0)
    users = out["blended"].info["users"]
    assert users["S"] + users["T"] + users["C"] == pop.n
    assert users["S"] + users["T"] == round(0.05 * pop.n)
    assert out["client"].n == users["C"] and out["blended"].n == pop.n
    w = np.asarray(out["blended"].info["weights"])
    assert np.all((w >= 0) & (w <= 1))


def test_run_is_reproducible_and_unprojected_output_is_raw():
    pop = record_population()
    a = Blender(**_defaults(project=False)).run(pop, 4.0, np.random.default_rng(9))
    b = Blender(**_defaults(project=False)).run(pop, 4.0, np.random.default_rng(9))
    np.testing.assert_array_equal(a["blended"].frequencies, b["blended"].frequencies)
    w = np.asarray(a["blended"].info["weights"])
    np.testing.assert_allclose(
        a["blended"].frequencies, w * a["opt-in"].frequencies + (1 - w) * a["client"].frequencies, rtol=1e-12
    )


def test_project_groups_blended_projects_only_the_blend():
    # [A17] Fig. 7 step 5 projects the blended estimate; opt-in and client stay as estimated.
    pop = record_population()
    raw = Blender(**_defaults(project=False)).run(pop, 1.0, np.random.default_rng(9))
    only = Blender(**_defaults(project_groups="blended")).run(pop, 1.0, np.random.default_rng(9))
    every = Blender(**_defaults()).run(pop, 1.0, np.random.default_rng(9))
    for label in ("opt-in", "client"):
        np.testing.assert_array_equal(only[label].frequencies, raw[label].frequencies)
        assert only[label].info["projected_groups"] == "blended"
    np.testing.assert_array_equal(only["blended"].frequencies, every["blended"].frequencies)
    assert raw["client"].frequencies.min() < 0  # so the test can tell the two apart
    assert not np.array_equal(only["client"].frequencies, every["client"].frequencies)


def test_run_on_a_flat_population_and_per_user_sampler():
    pop = Population(
        np.random.default_rng(1).multinomial(200_000, np.arange(1, 101) ** -1.2 / (np.arange(1, 101) ** -1.2).sum())
    )
    out = Blender(**_defaults(client_sampler="per-user", head_list_size=10)).run(pop, 2.0, np.random.default_rng(2))
    est = out["blended"]
    assert est.items.size == 10
    np.testing.assert_array_equal(np.sort(est.info["queries"]), np.sort(est.items))  # each item its own query


def test_run_with_an_empty_head_list():
    pop = Population(np.full(1000, 1))  # nobody shares a record: nothing passes tau
    out = Blender(**_defaults()).run(pop, 4.0, np.random.default_rng(0))
    for est in out.values():
        assert est.items.size == 0 and est.frequencies.size == 0
        assert est.info["star"]["frequency"] == pytest.approx(1.0)


def test_run_rejects_too_small_groups():
    pop = Population(np.array([10, 10]))
    with pytest.raises(ParamError, match="at least 2"):
        Blender(**_defaults()).run(pop, 4.0, np.random.default_rng(0))
    with pytest.raises(ParamError):
        Blender(**_defaults()).run(record_population(), float("inf"), np.random.default_rng(0))


def test_privacy_accounting_names_each_groups_guarantee():
    proto = Blender(**_defaults(delta=1e-7, opt_in_fraction=0.025))
    acc = proto.privacy_accounting(4.0)
    assert [e["model"] for e in acc] == ["central", "central", "local"]
    assert [e["delta"] for e in acc] == [1e-7, 0.0, 1e-7]
    assert all(e["epsilon"] == 4.0 for e in acc)
    assert "Laplace" in acc[1]["algorithm"]
    assert all("mechanism" not in e for e in acc)  # the runner adds the mechanism label
    client = acc[2]
    assert client["query_stage"]["epsilon"] + client["url_stage"]["epsilon"] == pytest.approx(4.0)
    assert client["query_stage"]["epsilon"] == pytest.approx(0.85 * 4.0)
    assert client["query_stage"]["delta"] + client["url_stage"]["delta"] == pytest.approx(1e-7)
    assert sum(e["share_of_users"] for e in acc) == pytest.approx(1.0)
    assert acc[0]["share_of_users"] == pytest.approx(0.025 * 0.95)


def test_blender_is_registered_with_paper_defaults(plugins):
    proto = plugins.create("protocol", "blender", {})
    assert (proto.delta, proto.opt_in_fraction, proto.f_o, proto.f_c) == (1e-5, 0.05, 0.95, 0.85)
    assert (proto.head_list_size, proto.m_o, proto.m_c) == (50, 1, 1)


def _defaults(**changes):
    values = {p.name: p.default for p in Blender.params}
    values.update(changes)
    return values


# -- (query, *) records: query-only data ----------------------------------------------------------

# Queries 0-3; records 0 = (q0, u), 1 = (q0, *), 2 = (q0, u'), 3 = (q1, *), 4 = (q1, u), 5 = (q2, u),
# 6 = (q3, *). Listed: 0, 1, 3, 5 (records 1 and 3 are their query's wildcard record).
W_PARENTS = np.array([0, 0, 0, 1, 1, 2, 3])
W_RECORDS = np.array([0, 1, 3, 5])
W_MASK = np.array([False, True, True, False])


def wildcard_head_list() -> HeadList:
    return HeadList.build(W_RECORDS, W_PARENTS, wildcard=W_MASK)


def test_head_list_with_wildcard_records_gives_them_the_q_star_slot():
    hl = wildcard_head_list()
    # q0: (q0, u) and <q0, *> = record 1; q1: only <q1, *> = record 3; q2: (q2, u) and <q2, *>; <*, *>
    np.testing.assert_array_equal(hl.url_counts, [2, 1, 2, 1])
    assert hl.n_slots == 6
    np.testing.assert_array_equal(hl.record_slots, [0, 1, 2, 3])
    np.testing.assert_array_equal(hl.star_url_slots, [1, 2, 4])
    np.testing.assert_array_equal(hl.outside_slots, [4, 5])  # <q2, *> and <*, *> hold no listed record
    # unlisted (q0, u') falls into <q0, *> (Fig. 6 lines 10-11), unlisted (q1, u) into <q1, *>
    np.testing.assert_array_equal(hl.slot_of(W_PARENTS), [0, 1, 1, 2, 2, 3, 5])
    # all records of a query-only population are wildcards: one slot per query
    flat = HeadList.build(np.array([4, 0, 2]), np.arange(6), wildcard=True)
    np.testing.assert_array_equal(flat.url_counts, [1, 1, 1, 1])
    np.testing.assert_array_equal(flat.record_slots, [0, 1, 2])
    np.testing.assert_array_equal(flat.outside_slots, [3])
    with pytest.raises(ValueError, match="more than one"):
        HeadList.build(np.array([0, 1]), np.array([0, 0]), wildcard=True)


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


@pytest.mark.parametrize("project", [True, False])
def test_query_only_population_is_modelled_as_query_star_records(project):
    """A population without record structure (aol-queries) holds (q, *) records: each listed query
    has one URL slot, and every group's record estimate is its query estimate."""
    rng = np.random.default_rng(1)
    pmf = np.arange(1, 301) ** -1.1
    pop = Population(rng.multinomial(400_000, pmf / pmf.sum()))
    out = Blender(**_defaults(head_list_size=20, project=project)).run(pop, 4.0, np.random.default_rng(2))
    for est in out.values():
        info = est.info
        assert info["records"] == "(query, *)"
        query_of_record = np.asarray(info["queries"])[info["item_query"]]
        np.testing.assert_array_equal(query_of_record, est.items)  # each item its own query
        q = np.asarray(info["query_frequencies"])[info["item_query"]]
        # bitwise before the projection; the projection runs on records and queries separately
        np.testing.assert_allclose(est.frequencies, q, rtol=0, atol=0 if not project else 1e-15)
        np.testing.assert_array_equal(est.variance, np.asarray(info["query_variance"])[info["item_query"]])
        assert info["star"]["frequency"] == pytest.approx(info["star_query"]["frequency"], abs=1e-15)
        assert info["star"]["variance"] == pytest.approx(info["star_query"]["variance"], rel=1e-12)
    # the same counts declared as one real URL per query: two URL slots, a noisier record estimate
    structured = pop.replace(parents=np.arange(pop.d))
    old = Blender(**_defaults(head_list_size=20, project=project)).run(structured, 4.0, np.random.default_rng(2))
    assert old["client"].info["records"] == "(query, URL)"
    np.testing.assert_array_equal(old["client"].items, out["client"].items)
    assert np.all(old["client"].variance > 2 * out["client"].variance)


def test_record_structured_output_does_not_depend_on_the_wildcard_support():
    # Without wildcard records the layout is the one of the plain head list.
    plain, marked = head_list(), HeadList.build(HL_RECORDS, PARENTS, wildcard=np.zeros(9, bool))
    for attr in ("url_counts", "record_slots", "star_url_slots", "offsets"):
        np.testing.assert_array_equal(getattr(plain, attr), getattr(marked, attr))
    np.testing.assert_array_equal(plain.outside_slots, np.append(plain.star_url_slots, plain.star_slot))


# -- the simulation mode and the query-estimate digest ---------------------------------------------


def test_client_sampler_follows_the_run_simulation_unless_given():
    pop = record_population(queries=100, n=100_000)
    default = Blender(**_defaults(head_list_size=10))
    assert default.client_sampler is None
    runs = {
        "default": default.run(pop, 4.0, np.random.default_rng(3)),
        "per-user run": default.run(pop, 4.0, np.random.default_rng(3), simulation="per-user"),
        "aggregate run": default.run(pop, 4.0, np.random.default_rng(3), simulation="aggregate"),
        "per-user param": Blender(**_defaults(head_list_size=10, client_sampler="per-user")).run(
            pop, 4.0, np.random.default_rng(3), simulation="aggregate"
        ),
    }
    sampler = {k: v["client"].info["client_sampler"] for k, v in runs.items()}
    assert sampler == {
        "default": "aggregate",
        "per-user run": "per-user",
        "aggregate run": "aggregate",
        "per-user param": "per-user",
    }
    client = {k: v["client"].frequencies for k, v in runs.items()}
    np.testing.assert_array_equal(client["default"], client["aggregate run"])
    np.testing.assert_array_equal(client["per-user run"], client["per-user param"])
    assert not np.array_equal(client["default"], client["per-user run"])
    with pytest.raises(ParamError, match="simulation"):
        default.run(pop, 4.0, np.random.default_rng(3), simulation="exact")


def test_each_estimate_carries_the_digest_of_its_record_vector():
    out = Blender(**_defaults(head_list_size=10)).run(record_population(), 4.0, np.random.default_rng(6))
    digests = set()
    for est in out.values():
        assert est.query_estimates.frequencies_digest == est.frequencies_digest()
        assert est.current_query_estimates() is est.query_estimates
        np.testing.assert_array_equal(est.query_estimates.frequencies, est.info["query_frequencies"])
        digests.add(est.query_estimates.frequencies_digest)
    assert len(digests) == 3
