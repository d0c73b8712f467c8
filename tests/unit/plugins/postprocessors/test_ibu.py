"""ibu: the likelihood it reads from each oracle, its fixed point (the MLE), no loop over items.

The fixed point is checked against an independent maximizer (scipy's SLSQP on the simplex, from
several starts) of log-likelihoods written out here from their definitions, not through the
channels ibu uses. The simplex and em on GRR: tests/statistical/test_ibu.py.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from support import builtin_plugins, ibu_postprocessor, simulated_estimate, zipf_counts

import ldpbench
import ldpbench_plugins
from ldpbench.engine.groups import simulate_groups
from ldpbench.errors import UsageError
from ldpbench.types import Estimate, Population
from ldpbench_plugins.postprocessors._likelihood import SupportBitsChannel

PLUGINS = builtin_plugins()


ORACLES = ("grr", "oue", "olh", "hr")


# -- what each oracle gives ibu, on both paths ---------------------------------------------------------


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
@pytest.mark.parametrize("oracle, kind", [("grr", "full"), ("hr", "full"), ("oue", "per-item"), ("olh", "per-item")])
def test_the_likelihood_ibu_uses_is_what_the_path_gives(oracle, kind, simulation):
    est = simulated_estimate(oracle, zipf_counts(24, 3000), 1.0, seed=1, simulation=simulation)
    # GRR and HR: the report histogram on both paths; OUE and OLH: the support counts only
    assert (est.report_histogram is not None) == (kind == "full")
    assert est.bernoulli_support and est.support_counts is not None
    out = ibu_postprocessor().apply(est, np.random.default_rng(0))
    assert out.info["diagnostics"] == {"likelihood": kind}
    assert out.info["ibu_likelihood"].startswith(kind)


def test_an_estimate_without_a_declared_likelihood_is_declined_with_a_reason():
    est = simulated_estimate("oue", zipf_counts(16, 2000), 1.0, seed=2).replace(bernoulli_support=False)
    with pytest.raises(UsageError, match="bernoulli_support"):
        ibu_postprocessor().apply(est, np.random.default_rng(0))


def test_support_counts_outside_zero_n_are_declined():
    est = simulated_estimate("oue", zipf_counts(16, 2000), 1.0, seed=3)
    bad = est.replace(support_counts=np.asarray(est.support_counts) + 5000)
    with pytest.raises(UsageError, match=r"\[0, n=2000\]"):
        ibu_postprocessor().apply(bad, np.random.default_rng(0))


def test_personalized_budgets_sum_the_groups_log_likelihoods():
    pop = Population(counts=zipf_counts(12, 50_000, seed=8))
    make = lambda eps: PLUGINS.create("oracle", "oue", {}, d=12, epsilon=eps)  # noqa: E731
    est = simulate_groups(make, pop, [(0.5, 300), (2.0, 300), (math.inf, 20)], np.random.default_rng(9))
    out = ibu_postprocessor(tol=1e-11, max_iter=100_000).apply(est, np.random.default_rng(0))
    assert out.info["diagnostics"]["likelihood"] == "mixed"  # two OUE groups per item, one exact
    parts = est.parts

    def loglik(theta):
        total = 0.0
        for part in parts:
            if part.channel is not None:  # eps = inf: the exact histogram
                total += _xlogy(part.report_histogram, theta)
            else:
                total += _per_item_loglik(theta, part.support_counts, part.n, part.p_star, part.q_star)
        return total

    _assert_is_the_maximizer(out.frequencies, loglik, 12)


# -- the fixed point is the MLE -------------------------------------------------------------------------


def _xlogy(c, x):
    c, x = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
    return float(np.sum(np.where(c > 0, c * np.log(np.where(c > 0, x, 1.0)), 0.0)))


def _per_item_loglik(theta, c, n, p, q):
    r = q + (p - q) * np.asarray(theta)
    c = np.asarray(c, dtype=float)
    return _xlogy(c, r) + _xlogy(n - c, 1 - r)


def _scipy_max(loglik, d, seed=0):
    """The best of several SLSQP runs on the simplex (from the uniform and random interior points)."""
    rng = np.random.default_rng(seed)
    starts = [np.full(d, 1.0 / d)] + [rng.dirichlet(np.ones(d)) for _ in range(4)]
    best = None
    for x0 in starts:
        res = minimize(
            lambda t: -loglik(np.clip(t, 1e-15, 1.0)),
            x0,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * d,
            constraints=[{"type": "eq", "fun": lambda t: t.sum() - 1.0}],
            options={"ftol": 1e-14, "maxiter": 2000},
        )
        if best is None or -res.fun > best[1]:
            best = (np.clip(res.x, 0, 1) / np.clip(res.x, 0, 1).sum(), -res.fun)
    return best


def _assert_is_the_maximizer(theta, loglik, d):
    found, value = _scipy_max(loglik, d)
    # ibu's point is at least as likely as scipy's best (up to scipy's own tolerance) ...
    assert loglik(theta) >= value - 1e-7 * abs(value), (loglik(theta), value)
    # ... and is the same point (the log-likelihoods here are strictly concave on the simplex)
    np.testing.assert_allclose(theta, found, rtol=0, atol=2e-4)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("oracle", ORACLES)
def test_the_fixed_point_is_the_mle(oracle, sparse):
    d = 6
    counts = np.array([0, 0, 1, 3, 20, 60]) if sparse else np.array([80, 60, 40, 30, 20, 10])
    est = simulated_estimate(oracle, counts, 1.0, seed=10)
    out = ibu_postprocessor(tol=1e-12, max_iter=100_000).apply(est, np.random.default_rng(0))
    theta = out.frequencies
    if oracle in ("grr", "hr"):
        # the full likelihood: sum_y h_y log sum_x P(y|x) theta_x, P read from the exact output table
        o = PLUGINS.create("oracle", oracle, {}, d=d, epsilon=1.0)
        P = o.channel().dense()
        hist = est.report_histogram
        loglik = lambda t: _xlogy(hist, P @ t)  # noqa: E731
    else:
        c, n, p, q = est.support_counts, est.n, est.p_star, est.q_star
        loglik = lambda t: _per_item_loglik(t, c, n, p, q)  # noqa: E731
    _assert_is_the_maximizer(theta, loglik, d)
    assert out.info["ibu_kkt_dual"] <= 1e-6  # no item would raise L if given mass


def test_hr_channel_matches_its_output_table():
    # the full-likelihood check above reads P from the channel: tie the channel to the sampler's law
    o = PLUGINS.create("oracle", "hr", {}, d=6, epsilon=1.0)
    P, _ = o.output_table()
    np.testing.assert_allclose(o.channel().dense(), P, rtol=0, atol=1e-15)


# -- the per-item channel --------------------------------------------------------------------------------


def test_support_bits_channel_is_a_channel_with_the_per_item_likelihood():
    d, p, q, n = 7, 0.5, 0.2, 40
    ch = SupportBitsChannel(d, p, q)
    P = ch.dense()
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-15)
    w = np.random.default_rng(0).random(2 * d)
    np.testing.assert_allclose(ch.backward(w), P.T @ w, rtol=1e-13, atol=0)
    theta = np.random.default_rng(1).dirichlet(np.ones(d))
    c = np.array([3, 40, 0, 7, 12, 9, 20], dtype=float)
    hist = np.concatenate([c, n - c])
    # its log-likelihood is the per-item one minus the constant n d log d
    expected = _per_item_loglik(theta, c, n, p, q) - n * d * math.log(d)
    assert _xlogy(hist, ch.forward(theta)) == pytest.approx(expected, rel=1e-12)


# -- vectorized: no Python loop over items -----------------------------------------------------------------


# Our two source trees, by location rather than by a substring of the path: a clone named
# ``ldpbench`` with its virtualenv inside would otherwise count numpy's and scipy's lines too.
_OUR_SOURCE = tuple(str(Path(package.__file__).resolve().parent) + os.sep for package in (ldpbench, ldpbench_plugins))


def _lines_executed(fn, skip=()):
    """Python lines executed in ldpbench and its plugins while ``fn`` runs (numpy's own C loops
    are not lines), outside the files named in ``skip``: a Python loop over items would make this
    grow with d."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        name = frame.f_code.co_filename
        if not name.startswith(_OUR_SOURCE) or name.endswith(skip):
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


# HR's channel is a fast Walsh-Hadamard transform: log2(K) Python-level butterfly stages over
# whole arrays (a loop over stages, not items), so _fwht.py is left out of the count; both HR
# domains are in the transform regime (the dense matrix is kept below K d = 2^16).
@pytest.mark.parametrize(
    "oracle, domains, skip",
    [
        ("grr", (50, 5000), ()),
        ("oue", (50, 5000), ()),
        ("olh", (50, 5000), ()),
        ("hr", (600, 5000), ("_fwht.py",)),
    ],
)
def test_no_python_loop_over_items(oracle, domains, skip):
    # the iteration, a fixed number of maps: the same lines at both domain sizes
    ibu = ibu_postprocessor(tol=0.0, max_iter=30, accelerate=False, solver="iterate")
    lines = []
    for d in domains:
        est = simulated_estimate(oracle, zipf_counts(d, 200_000), 1.0, seed=11)
        lines.append(_lines_executed(lambda est=est: ibu.apply(est, np.random.default_rng(0)), skip))
    assert lines[0] == lines[1], lines


@pytest.mark.parametrize("oracle", ["oue", "olh"])
def test_the_direct_solve_has_no_python_loop_over_items(oracle):
    # Its number of steps on the multiplier depends on the data, not on d: the lines it runs stay
    # far below one per item at d = 5,000 (a loop over items would run at least 5,000).
    lines = []
    for d in (50, 5000):
        est = simulated_estimate(oracle, zipf_counts(d, 200_000), 1.0, seed=11)
        lines.append(_lines_executed(lambda est=est: ibu_postprocessor().apply(est, np.random.default_rng(0)), ()))
    assert max(lines) < 2500, lines


def test_estimate_without_support_counts_is_declined():
    bare = Estimate(frequencies=np.full(4, 0.25), n=100, epsilon=1.0, mechanism="hand-built", p_star=0.5, q_star=0.2)
    with pytest.raises(UsageError, match="provides neither"):
        ibu_postprocessor().apply(bare, np.random.default_rng(0))
