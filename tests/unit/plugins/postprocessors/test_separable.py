"""``ibu`` solves a per-item likelihood directly: the same maximizer as its iteration, exactly.

The per-item composite likelihood is a sum of one-dimensional concave terms, so its maximizer on
the simplex is one equation in the multiplier of sum(theta) = 1 (plugins/postprocessors/_separable.py).
Checked against the IBU iteration run to a tight tolerance (where it converges), against the
KKT conditions computed by the EM code's own gradient, and against a grid search on d = 3.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.groups import combine, simulate_groups
from ldpbench.engine.simulate import simulate
from ldpbench.types import Population
from ldpbench_plugins.postprocessors._likelihood import likelihood_groups
from ldpbench_plugins.postprocessors._separable import per_item_mle

PLUGINS = builtin_plugins()
PER_ITEM = [("oue", {}), ("sue", {}), ("olh", {}), ("blh", {}), ("ss", {}), ("the", {}), ("pgr", {}), ("cms", {"m": 8})]


def _estimate(oracle, params, d, eps, n, seed):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, rng.dirichlet(np.full(d, 0.4)))
    return simulate(PLUGINS.create("oracle", oracle, params, d=d, epsilon=eps), counts, rng)


def _ibu(est, **params):
    return PLUGINS.create("postprocessor", "ibu", params).apply(est, np.random.default_rng(0))


@pytest.mark.parametrize(("oracle", "params"), PER_ITEM, ids=[o for o, _ in PER_ITEM])
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_the_direct_solve_is_the_iterations_fixed_point(oracle, params, eps):
    est = _estimate(oracle, params, d=12, eps=eps, n=20_000, seed=3)
    direct = _ibu(est)
    iterated = _ibu(est, solver="iterate", tol=1e-13, max_iter=100_000)
    assert direct.info["ibu_solver"] == "direct" and iterated.info["ibu_solver"] == "iteration"
    assert direct.info["ibu_likelihood"] == iterated.info["ibu_likelihood"]
    # the iteration never beats the direct maximizer; where it met its rule, they agree
    assert direct.info["ibu_loglik"] >= iterated.info["ibu_loglik"] - 1e-7 * abs(iterated.info["ibu_loglik"])
    if iterated.info["ibu_converged"]:
        np.testing.assert_allclose(direct.frequencies, iterated.frequencies, atol=1e-7)
    # KKT through the EM code's gradient: m <= 1 everywhere, = 1 on the support
    assert direct.info["ibu_kkt_dual"] <= 1e-12 and direct.info["ibu_kkt_slack"] <= 1e-12
    assert abs(direct.frequencies.sum() - 1) <= 1e-12 and direct.frequencies.min() >= 0


def test_it_beats_every_point_of_a_grid_on_three_items():
    est = _estimate("oue", {}, d=3, eps=0.7, n=300, seed=11)
    groups, _ = likelihood_groups(est, "ibu")
    from ldpbench_plugins.postprocessors._em import Likelihood

    best = per_item_mle(groups)
    lik = Likelihood(groups)
    grid = np.linspace(0, 1, 201)
    for a, b in itertools.product(grid, grid):
        if a + b <= 1:
            assert lik.mean_gradient(np.array([a, b, 1 - a - b]))[1] <= best.loglik + 1e-9


@pytest.mark.parametrize("oracle", ["oue", "olh", "ss"])
def test_personalized_budgets_sum_the_groups_likelihoods(oracle):
    rng = np.random.default_rng(5)
    d = 10
    f = rng.dirichlet(np.full(d, 0.5))
    parts = [
        simulate(PLUGINS.create("oracle", oracle, {}, d=d, epsilon=eps), rng.multinomial(n, f), rng)
        for eps, n in ((0.5, 3000), (2.0, 1500), (4.0, 500))
    ]
    est = combine(parts, d)
    direct = _ibu(est)
    iterated = _ibu(est, solver="iterate", tol=1e-13, max_iter=100_000)
    assert direct.info["ibu_solver"] == "direct"
    assert direct.info["ibu_kkt_dual"] <= 1e-12 and direct.info["ibu_kkt_slack"] <= 1e-12
    assert direct.info["ibu_loglik"] >= iterated.info["ibu_loglik"] - 1e-9 * abs(iterated.info["ibu_loglik"])
    if iterated.info["ibu_converged"]:
        np.testing.assert_allclose(direct.frequencies, iterated.frequencies, atol=1e-7)


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("n", [200, 5_000, 100_000])
def test_randomized_responses_full_likelihood_is_solved_directly_to_mle_rr(eps, n):
    # d = 16: the iteration's change-of-theta rule used to stop ~5e-5 from the MLE here (up to
    # 7e-4 at eps = 0.5); the direct solve lands on mle-rr's closed form (a sort, computed
    # independently) to round-off
    rng = np.random.default_rng(int(eps * 10) + n)
    counts = rng.multinomial(n, rng.dirichlet(np.full(16, 0.3)))
    est = simulate(PLUGINS.create("oracle", "grr", {}, d=16, epsilon=eps), counts, rng)
    out = _ibu(est)
    closed = PLUGINS.create("postprocessor", "mle-rr", {}).apply(est, np.random.default_rng(0))
    assert out.info["ibu_solver"] == "direct" and out.info["ibu_likelihood"].startswith("full")
    np.testing.assert_allclose(out.frequencies, closed.frequencies, rtol=0, atol=1e-8)
    assert out.info["ibu_kkt_dual"] <= 1e-12 and out.info["ibu_kkt_slack"] <= 1e-12


def test_personalized_randomized_response_budgets_are_solved_directly():
    # several GRR budgets and exact (eps = inf) users: still separable (each report's probability is
    # q_g + (p_g - q_g) theta_y on the simplex); no closed form, the same maximizer as the iteration
    pop = Population(counts=np.random.default_rng(4).multinomial(20_000, np.r_[0.5, 0.3, 0.1, 0.1, np.zeros(8)]))
    make = lambda eps: PLUGINS.create("oracle", "grr", {}, d=12, epsilon=eps)  # noqa: E731
    est = simulate_groups(make, pop, [(0.5, 800), (2.0, 300), (math.inf, 20)], np.random.default_rng(6))
    direct = _ibu(est)
    iterated = _ibu(est, solver="iterate", tol=1e-13, max_iter=100_000)
    assert direct.info["ibu_solver"] == "direct" and iterated.info["ibu_converged"]
    assert direct.info["ibu_kkt_dual"] <= 1e-12 and direct.info["ibu_kkt_slack"] <= 1e-12
    assert direct.info["ibu_loglik"] >= iterated.info["ibu_loglik"] - 1e-9 * abs(iterated.info["ibu_loglik"])
    np.testing.assert_allclose(direct.frequencies, iterated.frequencies, atol=1e-6)


def test_hadamard_responses_full_likelihood_is_not_separable():
    # HR's goes to the projected-gradient solver (test_projected.py)
    est = _estimate("hr", {}, d=12, eps=1.0, n=5000, seed=2)
    assert _ibu(est).info["ibu_solver"] == "projected-gradient"
