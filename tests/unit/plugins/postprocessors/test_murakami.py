"""em-murakami: [MHS18] Algorithm 2 against a direct, per-user computation of the same equations.

The direct version below loops over users and builds every V_n, as the paper writes the sums
(eq. 22, 28-32, 56-64); the plugin sums over distinct (channel, report) columns instead. Both
see the same simulated reports (drawn once, with the plugin's seed), so their outputs must agree
to round-off.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import ROOT, builtin_plugins

from ldpbench.engine.groups import simulate_groups
from ldpbench.types import Population
from ldpbench_plugins.postprocessors import _murakami
from ldpbench_plugins.postprocessors._em import groups_of, sample_histograms

PLUGINS = builtin_plugins()


MIX = [(0.5, 40), (2.0, 40), (math.inf, 10)]


def tiny_estimate(seed: int = 3, counts=(350, 250, 220, 180)):
    pop = Population(np.array(counts))
    make = lambda eps: PLUGINS.create("oracle", "grr", {}, d=pop.d, epsilon=eps)  # noqa: E731
    return simulate_groups(make, pop, MIX, np.random.default_rng(seed))


def per_user_columns(groups) -> np.ndarray:
    """One column g_n = Q(y_n | .) per user (d x N), from the dense channel matrices."""
    cols = []
    for g in groups:
        dense = g.channel.dense()
        for y, count in enumerate(g.histogram.astype(int)):
            cols.extend([dense[y]] * count)
    return np.array(cols).T


def direct_em(g: np.ndarray, iterations: int = 20_000) -> np.ndarray:
    """Algorithm 1, user by user: p_x <- (1/N) sum_n g_n[x] p_x / (g_n . p)."""
    d, n = g.shape
    p = np.full(d, 1.0 / d)
    for _ in range(iterations):
        new = np.zeros(d)
        for k in range(n):
            new += g[:, k] * p / (g[:, k] @ p)
        new /= n
        if np.max(np.abs(new - p)) < 1e-15:
            return new
        p = new
    return p


def direct_a_hat(p: np.ndarray, g: np.ndarray, ridge: float) -> np.ndarray:
    d, n = g.shape
    s = [g[:, k] / (g[:, k] @ p) for k in range(n)]  # eq. 22
    S = sum(np.outer(v, v) for v in s) / n  # eq. 31
    V = [S - np.outer(v, v) for v in s]  # eq. 30
    Q = -np.linalg.inv(S + ridge * np.eye(d))  # eq. 29, 32
    t1 = sum(V[k] @ Q @ s[k] for k in range(n)) / n  # eq. 56-57
    B = sum(np.outer(Q @ v, Q @ v) for v in s)  # eq. 62
    t2 = np.zeros(d)
    for k in range(n):
        u = g[:, k] @ B @ g[:, k]  # eq. 64
        t2 += g[:, k] * u / (g[:, k] @ p) ** 3  # eq. 63
    t2 /= 2 * n**2  # eq. 58
    return Q @ (t1 - t2) / n  # eq. 28


def direct_algorithm_2(groups, sim_groups, lo: int, hi: int, ridge: float) -> tuple[np.ndarray, float]:
    g = per_user_columns(groups)
    p = direct_em(g)
    a = direct_a_hat(p, g, ridge)
    g_sim = per_user_columns(sim_groups)
    p_sim = direct_em(g_sim)
    a_sim = direct_a_hat(p_sim, g_sim, ridge)
    best, best_err = None, np.inf
    for e in range(lo, hi + 1):
        alpha = 10.0**e
        err = float(np.sum((p_sim - alpha * a_sim - p) ** 2))
        if err < best_err:
            best, best_err = alpha, err
    out = np.maximum(p - best * a, 0.0)
    return out / out.sum(), best


def test_estimated_error_equals_the_per_user_sums():
    groups = groups_of(tiny_estimate())
    rng = np.random.default_rng(1)
    theta = rng.dirichlet(np.ones(4))
    fast = _murakami.estimated_error(theta, _murakami.report_columns(groups), ridge=1e-10)
    slow = direct_a_hat(theta, per_user_columns(groups), ridge=1e-10)
    np.testing.assert_allclose(fast, slow, rtol=1e-8, atol=1e-12 * np.abs(slow).max())
    assert np.abs(slow).max() > 0  # not trivially zero


@pytest.mark.parametrize("seed", [3, 5])
def test_algorithm_2_equals_a_direct_computation(seed):
    est = tiny_estimate(seed)
    groups = groups_of(est)
    plugin = PLUGINS.create("postprocessor", "em-murakami", {"tol": 1e-14, "max_iter": 100_000})
    out = plugin.apply(est, np.random.default_rng(seed))
    # the plugin's simulated reports: the first draw of its stream, from its own EM estimate
    theta = PLUGINS.create("postprocessor", "em", {"tol": 1e-14, "max_iter": 100_000}).apply(est, None).frequencies
    assert theta.min() > 1e-3  # an interior MLE, so both EMs converge to the same point quickly
    sim_groups = sample_histograms(groups, theta, np.random.default_rng(seed))
    expected, alpha = direct_algorithm_2(groups, sim_groups, -10, 9, 1e-10)
    assert out.info["murakami_alpha"] == alpha
    assert out.info["diagnostics"] == {"alpha": alpha}
    np.testing.assert_allclose(out.frequencies, expected, atol=1e-9)


def test_alpha_is_the_grid_argmin_and_the_decoder_clips_and_renormalizes():
    theta = np.array([0.5, 0.3, 0.2])
    a = np.array([1.0, -2.0, 1.0])
    sim = [(theta + 1e-2 * a, a)]  # p' = theta + 0.01 a: alpha = 1e-2 corrects it exactly
    alpha, errors = _murakami.choose_alpha(theta, sim, _murakami.alpha_grid(-4, 2))
    assert alpha == 1e-2 and errors.min() == pytest.approx(0.0, abs=1e-30)
    np.testing.assert_allclose(_murakami.normalized_decoder(np.array([0.6, -0.1, 0.5])), [0.6 / 1.1, 0, 0.5 / 1.1])


def test_the_alpha_grid_is_a_parameter():
    est = tiny_estimate()
    out = PLUGINS.create("postprocessor", "em-murakami", {"alpha_min_exponent": 5, "alpha_max_exponent": 5}).apply(
        est, np.random.default_rng(0)
    )
    assert out.info["murakami_alpha"] == 1e5
    assert out.frequencies.min() >= 0 and out.frequencies.sum() == pytest.approx(1.0)


def test_a_capped_em_run_is_noted_as_em_notes_it():
    # em-murakami runs EM on the data and on each simulated data set; a run stopped by max_iter is
    # not the MLE the correction assumes, and em's rows say so: em-murakami's must too
    est = tiny_estimate()
    capped = {"max_iter": 1, "accelerate": False, "simulations": 2}
    out = PLUGINS.create("postprocessor", "em-murakami", capped).apply(est, np.random.default_rng(0))
    em = PLUGINS.create("postprocessor", "em", {"max_iter": 1, "accelerate": False}).apply(est, None)
    assert em.warnings and em.warnings[0] in out.warnings
    assert any("2 of 2 simulated data sets" in w for w in out.warnings)
    converged = PLUGINS.create("postprocessor", "em-murakami", {}).apply(est, np.random.default_rng(0))
    assert not converged.warnings


def test_old_name_runs_the_rilstone_step():
    est = tiny_estimate()
    old = PLUGINS.create("postprocessor", "em-corrected", {}).apply(est, np.random.default_rng(0))
    new = PLUGINS.create("postprocessor", "em-rilstone", {}).apply(est, np.random.default_rng(0))
    np.testing.assert_array_equal(old.frequencies, new.frequencies)


def test_the_diagnostics_script_computes_the_plugins_a_hat():
    # scripts/murakami2018_alpha_diagnostics.py varies eq. 28 (inverse of S, t2 factor); with the
    # published options it must be the plugin's a_hat, or its table compares something else
    import importlib.util

    path = ROOT / "scripts" / "murakami2018_alpha_diagnostics.py"
    spec = importlib.util.spec_from_file_location("murakami2018_alpha_diagnostics", path)
    diagnostics = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(diagnostics)
    groups = groups_of(tiny_estimate())
    theta = PLUGINS.create("postprocessor", "em", {}).fit(tiny_estimate()).theta
    reports = _murakami.report_columns(groups)
    published = _murakami.estimated_error(theta, reports)
    np.testing.assert_allclose(
        diagnostics.a_hat_variant(theta, reports, pinv=False, t2_scale=1.0), published, rtol=1e-10
    )
    # every report value was sent here, so S is invertible and the pseudo-inverse agrees
    np.testing.assert_allclose(diagnostics.a_hat_variant(theta, reports, pinv=True, t2_scale=1.0), published, rtol=1e-6)
    doubled = diagnostics.a_hat_variant(theta, reports, pinv=False, t2_scale=2.0)
    assert not np.allclose(doubled, published)
