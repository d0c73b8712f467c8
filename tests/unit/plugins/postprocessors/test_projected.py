"""ibu's projected-gradient solver: the simplex projection, and the MLE of a full likelihood that is
not separable (HR's) -- the point the IBU iteration reaches where it converges, far sooner."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins, simulated_estimate, zipf_counts

from ldpbench.engine.groups import simulate_groups
from ldpbench.types import Population
from ldpbench_plugins.postprocessors._em import run_em
from ldpbench_plugins.postprocessors._likelihood import likelihood_groups
from ldpbench_plugins.postprocessors._projected import project_to_simplex, spg_mle

PLUGINS = builtin_plugins()


@pytest.mark.parametrize("seed", range(5))
def test_the_projection_is_the_closest_point_of_the_simplex(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(0.0, 1.0 + seed, size=50)
    x = project_to_simplex(v)
    assert x.min() >= 0 and abs(x.sum() - 1) <= 1e-12
    # KKT of min |x - v|^2 on the simplex: v - x = tau on the support, v <= tau off it
    tau = float(np.mean((v - x)[x > 0]))
    np.testing.assert_allclose((v - x)[x > 0], tau, atol=1e-12)
    assert np.all(v[x == 0] <= tau + 1e-12)
    # and no random point of the simplex is closer
    others = rng.dirichlet(np.full(50, 0.2), size=2000)
    assert np.min(np.sum((others - v) ** 2, axis=1)) >= np.sum((x - v) ** 2) - 1e-12


def _groups(oracle, d, n, eps, seed):
    est = simulated_estimate(oracle, zipf_counts(d, n, seed=seed), eps, seed=seed)
    return likelihood_groups(est, "ibu")[0], est


# The iteration is the reference: EM to tol 1e-14 where it meets its rule (up to 10^5 maps).
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
@pytest.mark.parametrize(("d", "n", "seed"), [(16, 500, 1), (16, 100_000, 2), (40, 20_000, 3)])
def test_hr_mle_is_the_iterations_fixed_point(d, n, seed, eps):
    groups, _ = _groups("hr", d, n, eps, seed)
    spg = spg_mle(groups)
    em = run_em(groups, tol=1e-14, max_iter=100_000)
    assert spg.converged and spg.iterations <= 60, spg.iterations
    assert spg.kkt_dual <= 1e-12 and spg.kkt_slack <= 1e-12
    assert abs(spg.theta.sum() - 1) <= 1e-12 and spg.theta.min() >= 0
    assert spg.loglik >= em.loglik - 1e-9 * abs(em.loglik)  # never less likely than the iteration
    if em.converged:
        np.testing.assert_allclose(spg.theta, em.theta, rtol=0, atol=1e-8)


def test_ibu_uses_it_for_hr_and_a_mix_of_budgets():
    pop = Population(counts=zipf_counts(24, 30_000, seed=5))
    make = lambda eps: PLUGINS.create("oracle", "hr", {}, d=24, epsilon=eps)  # noqa: E731
    est = simulate_groups(make, pop, [(0.5, 600), (2.0, 300), (math.inf, 20)], np.random.default_rng(7))
    ibu = PLUGINS.create("postprocessor", "ibu", {}).apply(est, np.random.default_rng(0))
    assert ibu.info["ibu_solver"] == "projected-gradient" and ibu.info["ibu_converged"]
    assert ibu.info["ibu_kkt_dual"] <= 1e-12 and ibu.info["ibu_kkt_slack"] <= 1e-12
    iterated = PLUGINS.create("postprocessor", "ibu", {"solver": "iterate", "tol": 1e-14, "max_iter": 100_000})
    reference = iterated.apply(est, np.random.default_rng(0))
    assert ibu.info["ibu_loglik"] >= reference.info["ibu_loglik"] - 1e-9 * abs(reference.info["ibu_loglik"])
    if reference.info["ibu_converged"]:
        np.testing.assert_allclose(ibu.frequencies, reference.frequencies, rtol=0, atol=1e-8)


def test_a_zero_tolerance_runs_the_cap_and_says_so():
    groups, est = _groups("hr", 16, 5000, 1.0, 4)
    capped = spg_mle(groups, tol=0.0, max_iter=3)
    assert not capped.converged and capped.iterations == 3
    out = PLUGINS.create("postprocessor", "ibu", {"tol": 0.0, "max_iter": 3}).apply(est, np.random.default_rng(0))
    assert any("iteration cap" in w for w in out.warnings)
