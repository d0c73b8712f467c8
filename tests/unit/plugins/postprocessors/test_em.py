"""EM reconstruction and its corrections (plugins/postprocessors/em.py; docs/algorithms.md §8.1, §8.5).

- with one budget and an interior solution, EM equals GRR's matrix-inversion estimate;
- the log-likelihood never decreases;
- the fixed point satisfies the KKT conditions of the constrained MLE;
- eps = inf users are handled without division by zero (pure exact users give their histogram);
- the Newton step behind em-corrected equals a dense solve;
- oracles without a finite channel are refused with a clear error.

The slow checks (outputs on the simplex, structured = generic paths) are in tests/statistical/test_em.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins, grr, mixed_estimate, postprocessor, zipf_population

from ldpbench.engine.groups import exact_estimate
from ldpbench.engine.simulate import simulate
from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate, Population
from ldpbench_plugins.postprocessors._em import Information, groups_of, newton_step, run_em

PLUGINS = builtin_plugins()


# -- A16 --------------------------------------------------------------------------------------


def test_single_budget_interior_em_equals_matrix_inversion():
    d = 5
    pop = Population(np.array([24_000, 22_000, 20_000, 18_000, 16_000]))
    est = simulate(grr(d, 2.0), pop.counts, np.random.default_rng(1))
    assert np.all(est.frequencies > 0.05)  # interior
    out = postprocessor("em", tol=1e-13, max_iter=100_000).apply(est, np.random.default_rng(0))
    assert out.info["em_converged"]
    assert np.max(np.abs(out.frequencies - est.frequencies)) <= 1e-6


def test_loglikelihood_never_decreases_and_iterates_stay_on_the_simplex():
    est = mixed_estimate()
    groups = groups_of(est)
    result = run_em(groups, tol=1e-10, max_iter=3000, trace=True)  # accelerated (the default)
    ll = np.array(result.trace)
    assert len(ll) > 10
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1]))
    assert ll[-1] > ll[0]
    # every iterate on the simplex: re-run a few steps and inspect them
    for steps in (1, 2, 5, 50, 500):
        for accelerate in (False, True):
            theta = run_em(groups, tol=0.0, max_iter=steps, accelerate=accelerate).theta
            assert np.all(theta >= 0) and abs(theta.sum() - 1) <= 1e-12


def test_fixed_point_satisfies_kkt():
    for seed in range(3):
        result = run_em(groups_of(mixed_estimate(seed=seed)), tol=1e-10, max_iter=50_000)
        assert result.converged
        m, theta = result.m, result.theta
        # stationarity with multiplier theta . m = 1, dual feasibility m <= 1, complementary slackness
        assert theta @ m == pytest.approx(1.0, abs=1e-12)
        assert result.kkt_dual <= 1e-8
        assert result.kkt_slack <= 1e-10 / theta.size * 2
        support = theta > 1e-4
        assert np.max(np.abs(m[support] - 1)) <= 1e-6
        assert np.any(theta < 1e-6)  # a boundary solution: the test exercises both KKT cases


def test_acceleration_reaches_the_same_fixed_point_with_fewer_maps():
    groups = groups_of(mixed_estimate(seed=1))
    plain = run_em(groups, tol=1e-11, max_iter=200_000, accelerate=False, trace=True)
    fast = run_em(groups, tol=1e-11, max_iter=200_000, accelerate=True)
    assert plain.converged and fast.converged and fast.iterations < plain.iterations
    assert np.max(np.abs(plain.theta - fast.theta)) <= 1e-7
    assert fast.loglik >= plain.loglik - 1e-9 * abs(plain.loglik)
    ll = np.array(plain.trace)
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1]))


def test_exact_users_only_give_their_histogram():
    counts = np.array([5, 0, 3, 2, 0])
    est = exact_estimate(counts)
    with np.errstate(all="raise"):
        out = postprocessor("em").apply(est, np.random.default_rng(0))
        corrected = postprocessor("em-corrected").apply(est, np.random.default_rng(0))
    assert np.allclose(out.frequencies, counts / 10, atol=1e-12)
    assert np.allclose(corrected.frequencies, counts / 10, atol=1e-12)


def test_exact_users_mixed_with_grr_need_no_division_by_zero():
    with np.errstate(divide="raise", invalid="raise"):
        out = postprocessor("em-corrected").apply(mixed_estimate(seed=4), np.random.default_rng(0))
    assert np.all(np.isfinite(out.frequencies))


def test_exact_users_pin_their_items():
    # An exact report of item v means theta_v >= (its count) / N at the MLE.
    est = mixed_estimate(seed=5)
    exact = est.parts[-1].report_histogram
    theta = postprocessor("em").apply(est, np.random.default_rng(0)).frequencies
    assert np.all(theta[exact > 0] >= exact[exact > 0] / est.n - 1e-12)


def test_newton_step_equals_a_dense_constrained_solve():
    groups = groups_of(mixed_estimate(d=12, seed=7))
    result = run_em(groups, tol=1e-10)
    theta, m = result.theta, result.m
    delta, lam, active = newton_step(groups, theta, m)
    n = sum(g.n for g in groups)
    J = np.zeros((12, 12))
    for g in groups:
        Q = g.channel.dense()  # (reports, items)
        if g.exact:
            J += np.diag(np.where(g.histogram > 0, g.histogram / (n * theta**2), 0.0))
        else:
            P = Q @ theta
            J += (g.n / n) * (Q.T / P) @ Q
    idx = np.flatnonzero(active)
    Ja = J[np.ix_(idx, idx)]
    # KKT system of "maximize m.D - D'JD/2 subject to sum(D) = 0"
    kkt = np.block([[Ja, np.ones((idx.size, 1))], [np.ones((1, idx.size)), np.zeros((1, 1))]])
    sol = np.linalg.solve(kkt, np.concatenate([m[idx], [0.0]]))
    assert np.allclose(delta[idx], sol[:-1], rtol=1e-8, atol=1e-10)
    assert lam == pytest.approx(sol[-1], rel=1e-8)
    assert abs(delta.sum()) <= 1e-10


def test_information_operator_matches_its_dense_form():
    groups = groups_of(mixed_estimate(d=9, seed=8))
    theta = run_em(groups, tol=1e-8).theta
    info = Information(groups, theta)
    dense = np.stack([info.matvec(e) for e in np.eye(9)], axis=1)
    assert np.allclose(dense, dense.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(dense) > 0)


def test_hr_reports_are_reconstructed():
    d = 20
    hr = PLUGINS.create("oracle", "hr", {}, d=d, epsilon=2.0)
    pop = zipf_population(d, 50_000)
    est = simulate(hr, pop.counts, np.random.default_rng(3))
    out = postprocessor("em", tol=1e-10).apply(est, np.random.default_rng(0))
    corrected = postprocessor("em-corrected").apply(est, np.random.default_rng(0))
    assert np.abs(out.frequencies - pop.frequencies).sum() < 0.1
    assert abs(corrected.frequencies.sum() - 1) <= 1e-12 and np.all(corrected.frequencies >= 0)


# -- refusals ------------------------------------------------------------------------------------


def test_oracle_without_channel_is_refused_clearly():
    est = Estimate(np.full(4, 0.25), n=100, epsilon=1.0, mechanism="oue", p_star=0.5, q_star=0.27)
    for name in ("em", "em-corrected", "em-bootstrap"):
        with pytest.raises(NotApplicable, match="finite report space"):
            postprocessor(name).apply(est, np.random.default_rng(0))


def test_groups_of_uses_parts_or_the_estimate_itself():
    est = mixed_estimate(seed=9)
    assert [g.epsilon for g in groups_of(est)] == [p.epsilon for p in est.parts]
    single = est.parts[0]
    assert len(groups_of(single)) == 1 and groups_of(single)[0].n == single.n


# -- em-corrected ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["em-rilstone", "em-corrected"])
def test_em_rilstone_is_labelled_experimental_and_not_a_bias_correction(name):
    # docs/em-correction.md: the plug-in is a shrinkage step, not a bias correction ([MHS18]'s
    # published correction is em-murakami). `ldpbench plugins` shows the first docstring line, so
    # that line must say both, under the new name and the old one.
    summary = PLUGINS.get("postprocessor", name).summary
    assert summary.startswith("Experimental") and "not a bias correction" in summary


def test_correction_vanishes_at_an_interior_mle():
    d = 5
    pop = Population(np.array([24_000, 22_000, 20_000, 18_000, 16_000]))
    est = simulate(grr(d, 2.0), pop.counts, np.random.default_rng(2))
    em = postprocessor("em", tol=1e-13, max_iter=100_000).apply(est, np.random.default_rng(0))
    corrected = postprocessor("em-corrected", tol=1e-13, max_iter=100_000).apply(est, np.random.default_rng(0))
    assert np.max(np.abs(corrected.frequencies - em.frequencies)) <= 1e-10


def test_correction_lifts_the_boundary_and_lowers_the_rest():
    est = mixed_estimate(d=40, seed=10)
    em = postprocessor("em").apply(est, np.random.default_rng(0)).frequencies
    corrected = postprocessor("em-corrected").apply(est, np.random.default_rng(0))
    change = corrected.frequencies - em
    boundary = em < 1e-6
    assert boundary.sum() >= 3 and corrected.info["correction_l1"] > 0
    # the boundary gains (up to the simplex projection's common shift, which can take a few 1e-9)
    assert change[boundary].sum() > 0 and np.mean(change[boundary] > 0) >= 0.5
    assert np.all(change[boundary] >= -1e-7)
    assert change[em > 0.05].sum() < 0


def test_rilstone_plug_in_reduces_to_minus_q_times_mean_score():
    """The algebra of docs/em-correction.md §3, checked numerically on the full formula.

    Free coordinates (theta_K = 1 - sum of the others), per-report scores q_n, empirical means at
    the EM estimate: Rilstone et al.'s bias (1/N) Q {mean[V_n Q d_n] - 1/2 H2 vec(mean[Q d_n d_n' Q'])}
    with H1 = mean grad q_n, Q = H1^-1, V_n = grad q_n - H1, H2 = mean grad^2 q_n equals
    -(1/N) Q qbar exactly; qbar = 0 at an interior MLE, not at a boundary one.
    """
    K = 6
    est = mixed_estimate(d=K, seed=12, mix=(60, 60, 8, 3))
    groups = groups_of(est)
    theta = run_em(groups, tol=1e-12, max_iter=100_000).theta
    rows, weights = [], []
    for g in groups:
        Q = g.channel.dense()
        P = Q @ theta
        for y in np.flatnonzero(g.histogram):
            u = Q[y] / P[y]
            rows.append(u[:-1] - u[-1])  # score in free coordinates
            weights.append(g.histogram[y])
    q = np.array(rows)
    w = np.array(weights) / np.sum(weights)
    n = sum(g.n for g in groups)
    H1 = -(q.T * w) @ q  # grad q_n = -q_n q_n'
    Qm = np.linalg.inv(H1)
    qbar = w @ q
    Qd = q @ Qm.T  # rows: Q d_n
    grads = -np.einsum("ni,nj->nij", q, q)
    V = grads - H1
    term1 = np.einsum("n,nij,nj->i", w, V, Qd)
    M = (Qd.T * w) @ Qd
    H2 = 2 * np.einsum("n,ni,nj,nk->ijk", w, q, q, q)  # grad^2 q_n = 2 q (x) q (x) q
    term2 = 0.5 * np.einsum("ijk,jk->i", H2, M)
    bias = Qm @ (term1 - term2) / n
    assert np.allclose(bias, -Qm @ qbar / n, rtol=1e-9, atol=1e-15)
    assert np.abs(qbar).max() > 1e-3  # a boundary MLE: the plug-in does not vanish


# -- the generic (HR) path: KKT and monotone likelihood at a boundary fixed point -----------------


def test_hr_fixed_point_satisfies_kkt_and_likelihood_never_decreases():
    d = 24
    hr = PLUGINS.create("oracle", "hr", {}, d=d, epsilon=1.0)
    pop = zipf_population(d, 100_000, s=1.5)
    users = np.random.default_rng(13).multivariate_hypergeometric(pop.counts, 400)
    groups = groups_of(simulate(hr, users, np.random.default_rng(14)))
    assert not groups[0].grr_like  # the channel-operator path
    traced = run_em(groups, tol=1e-10, max_iter=20_000, trace=True)
    ll = np.array(traced.trace)
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1])) and ll[-1] > ll[0]
    result = run_em(groups, tol=1e-12, max_iter=100_000)
    assert result.converged
    theta, m = result.theta, result.m
    assert np.all(theta >= 0) and abs(theta.sum() - 1) <= 1e-12
    assert theta @ m == pytest.approx(1.0, abs=1e-12)
    assert result.kkt_dual <= 1e-6
    assert np.max(np.abs(m[theta > 1e-4] - 1)) <= 1e-6
    assert np.any(theta < 1e-8)  # the boundary case is exercised


# -- what the estimate records -------------------------------------------------------------------


def test_info_records_iterations_convergence_and_the_stopping_rule():
    est = mixed_estimate(seed=15)
    capped = postprocessor("em", max_iter=3).apply(est, np.random.default_rng(0)).info
    assert capped["em_iterations"] == 3 and capped["em_converged"] is False
    full = postprocessor("em").apply(est, np.random.default_rng(0)).info
    assert full["em_converged"] is True and 3 < full["em_iterations"] <= 10_000
    assert full["em_stopping_rule"] == "max |theta change| < 1e-08/d, at most 10000 iterations"
    assert full["em_kkt_dual"] <= 1e-6 and full["em_kkt_slack"] <= 1e-8
