"""mle-rr: the closed-form MLE of randomized response is the KKT point and IBU's limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.groups import simulate_groups
from ldpbench.engine.simulate import simulate
from ldpbench.errors import UsageError
from ldpbench.types import Population
from ldpbench_plugins.postprocessors.mle_rr import rr_mle

PLUGINS = builtin_plugins()


def _grr_estimate(counts, epsilon, seed):
    o = PLUGINS.create("oracle", "grr", {}, d=len(counts), epsilon=epsilon)
    return simulate(o, np.asarray(counts), np.random.default_rng(seed))


def _zipf(d, n, s, seed):
    w = 1.0 / np.arange(1, d + 1) ** s
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


#: (name, counts, epsilon): dense, sparse ones whose unbiased estimate has many negatives, a
#: larger domain, a domain where a few items hold everyone.
POPULATIONS = [
    ("dense", _zipf(20, 50_000, 0.8, 0), 2.0),
    ("sparse-small-eps", _zipf(60, 2_000, 1.5, 1), 0.5),
    ("sparse-d500", _zipf(500, 5_000, 1.2, 2), 1.0),
    ("three-items", np.r_[[400, 300, 300], np.zeros(37, dtype=int)], 1.0),
]


def _mle(est):
    return PLUGINS.create("postprocessor", "mle-rr", {}).apply(est, np.random.default_rng(0))


def _loglik(theta, hist, p, q):
    P = q + (p - q) * theta
    return float(np.sum(hist[hist > 0] * np.log(P[hist > 0])))


@pytest.mark.parametrize("name, counts, epsilon", POPULATIONS, ids=[p[0] for p in POPULATIONS])
def test_mle_rr_equals_ibu_at_convergence(name, counts, epsilon):
    est = _grr_estimate(counts, epsilon, seed=3)
    if name != "dense":
        assert np.sum(est.frequencies < 0) >= 5  # the unbiased estimate is far from the simplex
    closed = _mle(est).frequencies
    ibu = PLUGINS.create("postprocessor", "ibu", {"tol": 1e-13, "max_iter": 100_000}).apply(
        est, np.random.default_rng(0)
    )
    assert ibu.info["ibu_converged"], ibu.info
    np.testing.assert_allclose(closed, ibu.frequencies, rtol=0, atol=1e-8)
    p, q = est.channel.tags().randomized_response
    hist = np.asarray(est.report_histogram, dtype=float)
    # exact: never less likely than IBU's iterate
    assert _loglik(closed, hist, p, q) >= _loglik(ibu.frequencies, hist, p, q) - 1e-9


@pytest.mark.parametrize("name, counts, epsilon", POPULATIONS, ids=[p[0] for p in POPULATIONS])
def test_mle_rr_satisfies_the_kkt_conditions(name, counts, epsilon):
    est = _grr_estimate(counts, epsilon, seed=4)
    theta = _mle(est).frequencies
    p, q = est.channel.tags().randomized_response
    c = np.asarray(est.report_histogram, dtype=float)
    assert np.all(theta >= 0) and theta.sum() == pytest.approx(1.0, abs=1e-12)
    # gradient of L/n: g_v = (p - q) c_v / (n P_v) + q sum_y c_y / (n P_y); KKT: g_v <= 1, = 1 on the support
    P = q + (p - q) * theta
    g = ((p - q) * c / P + q * np.sum(c / P)) / c.sum()
    kept = theta > 0
    np.testing.assert_allclose(g[kept], 1.0, rtol=0, atol=1e-10)
    assert np.all(g[~kept] <= 1.0 + 1e-10)


def test_mle_rr_is_the_unbiased_estimate_when_that_has_no_negative_entry():
    est = _grr_estimate(_zipf(8, 200_000, 0.3, 5), 3.0, seed=5)
    assert np.all(est.frequencies > 0)
    np.testing.assert_allclose(_mle(est).frequencies, est.frequencies, rtol=0, atol=1e-13)


def test_without_noise_it_is_the_histogram():
    c = np.array([5.0, 0.0, 3.0, 2.0])
    theta, kept = rr_mle(c, 1.0, 0.0)
    np.testing.assert_array_equal(theta, c / 10)
    assert kept == 3


def test_the_closed_form_matches_the_sequential_removal_of_the_smallest_counts():
    # the definition, item by item: drop the smallest count while the formula would make it negative
    rng = np.random.default_rng(6)
    for _ in range(50):
        d = int(rng.integers(2, 30))
        eps = float(rng.uniform(0.1, 3))
        p = math.exp(eps) / (math.exp(eps) + d - 1)
        q = (1 - p) / (d - 1)
        c = rng.poisson(rng.uniform(0, 5, d)).astype(float)
        if c.sum() == 0:
            continue
        order = np.argsort(c)
        removed, rest = 0, c.sum()
        while removed < d and q * rest > (1 - removed * q) * c[order[removed]]:
            rest -= c[order[removed]]
            removed += 1
        slow = np.zeros(d)
        keep = order[removed:]
        slow[keep] = ((1 - removed * q) * c[keep] - rest * q) / (rest * (p - q))
        fast, kept = rr_mle(c, p, q)
        assert kept == d - removed
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_declines_what_has_no_randomized_response_channel():
    hr = PLUGINS.create("oracle", "hr", {}, d=10, epsilon=1.0)
    est = simulate(hr, _zipf(10, 1000, 1.0, 7), np.random.default_rng(7))
    with pytest.raises(UsageError, match="randomized-response"):
        _mle(est)
    oue = PLUGINS.create("oracle", "oue", {}, d=10, epsilon=1.0)
    with pytest.raises(UsageError, match="use 'ibu'"):
        _mle(simulate(oue, _zipf(10, 1000, 1.0, 7), np.random.default_rng(7)))


def test_declines_personalized_budgets():
    pop = Population(counts=_zipf(10, 20_000, 1.0, 8))
    make = lambda eps: PLUGINS.create("oracle", "grr", {}, d=10, epsilon=eps)  # noqa: E731
    est = simulate_groups(make, pop, [(0.5, 300), (2.0, 300)], np.random.default_rng(8))
    with pytest.raises(UsageError, match="2 budget groups"):
        _mle(est)
