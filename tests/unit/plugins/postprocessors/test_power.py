"""Power and PowerNS ([W20], docs/algorithms.md §2.10-2.11, §8.1, A13)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench import build_plugins
from ldpbench.types import Estimate
from ldpbench_plugins.numerics.posterior import posterior
from ldpbench_plugins.postprocessors.power import FALLBACK_ALPHA, power_counts
from ldpbench_plugins.priors.families import PowerLaw


@pytest.fixture(scope="module")
def plugins():
    return build_plugins()


def estimate(f: np.ndarray, n: int = 10_000, eps: float = 1.0) -> Estimate:
    p, q = 0.5, 1.0 / (math.exp(eps) + 1.0)
    var = q * (1 - q) / (n * (p - q) ** 2)
    f = np.asarray(f, dtype=float)
    return Estimate(f, n, eps, "oue", p, q, np.full(f.size, var))


def a8_vectors():
    """A8: entries N(1/d, (3/d)^2) for d in {1, 2, 7, 100, 1000}, plus all-negative and all-positive."""
    rng = np.random.default_rng(2024)
    for d in (1, 2, 7, 100, 1000):
        for _ in range(40):
            yield rng.normal(1 / d, 3 / d, d)
        yield -np.abs(rng.normal(1 / d, 3 / d, d))
        yield np.abs(rng.normal(1 / d, 3 / d, d))


@pytest.mark.slow
def test_power_and_power_ns_a8_properties(plugins):
    power = plugins.create("postprocessor", "power", {})
    power_ns = plugins.create("postprocessor", "power-ns", {})
    rng = np.random.default_rng(0)
    for f in a8_vectors():
        est = estimate(f)
        out = power.apply(est, rng).frequencies
        assert np.all(out >= 0) and np.all(out >= 1 / est.n - 1e-15) and np.all(out <= 1 + 1e-12)
        ns = power_ns.apply(est, rng).frequencies
        assert np.all(ns >= 0)
        assert abs(ns.sum() - 1) <= 1e-9


def test_power_ns_is_norm_sub_after_power(plugins):
    rng = np.random.default_rng(1)
    est = estimate(rng.normal(0.01, 0.03, 100))
    via_chain = plugins.create("postprocessor", "norm-sub", {}).apply(
        plugins.create("postprocessor", "power", {}).apply(est, rng), rng
    )
    direct = plugins.create("postprocessor", "power-ns", {}).apply(est, rng)
    np.testing.assert_allclose(direct.frequencies, via_chain.frequencies, rtol=0, atol=1e-12)


def test_alpha_solves_the_mean_equation():
    rng = np.random.default_rng(3)
    n = 20_000
    f = np.abs(rng.normal(0.01, 0.02, 100))
    counts, info = power_counts(estimate(f, n=n))
    k = np.arange(1, n + 1, dtype=float)
    w = k ** -info["alpha"]
    assert (k * w).sum() / w.sum() == pytest.approx(n * f.mean(), rel=1e-6)
    assert counts.min() >= 1 and counts.max() <= n


def test_fallback_alpha_when_the_mean_is_below_one():
    counts, info = power_counts(estimate(np.full(100, 0.5 / 10_000)))  # mean count 0.5
    assert info["alpha"] == FALLBACK_ALPHA and info["note"]


def test_power_equals_calibrate_with_a_power_law_prior(plugins):
    rng = np.random.default_rng(4)
    est = estimate(np.abs(rng.normal(0.002, 0.004, 500)), n=200_000)
    a = plugins.create("postprocessor", "power", {}).apply(est, rng)
    b = plugins.create("postprocessor", "calibrate", {"prior": "power-law"}).apply(est, rng)
    np.testing.assert_allclose(a.frequencies, b.frequencies, rtol=1e-12)
    assert a.info["power"]["alpha"] == pytest.approx(b.info["calibrate"]["params"]["alpha"], rel=1e-12)


def test_small_noise_rounds_into_the_support():
    # s -> 0: the posterior mean is the nearest integer of the support
    n = 1000
    x = np.array([-5.2, 0.3, 1.2, 2.3, 2.7, 17.8, 999.6, 1500.0])
    got = posterior(x, 0.05, PowerLaw(), (1.5,), (1, n)).mean
    np.testing.assert_allclose(got, np.clip(np.round(x), 1, n), atol=1e-6)


def test_flat_prior_leaves_interior_estimates_alone():
    n, s = 100_000, 300.0
    x = np.linspace(20 * s, n - 20 * s, 50) + 0.37
    got = posterior(x, s, PowerLaw(), (0.0,), (1, n)).mean
    np.testing.assert_allclose(got, x, rtol=0, atol=1e-6 * s)


def test_power_is_monotone_in_the_estimate():
    n, s = 50_000, 800.0
    x = np.linspace(-10 * s, n + 10 * s, 10_000)
    m = posterior(x, s, PowerLaw(), (1.8,), (1, n)).mean
    assert np.all(np.diff(m) >= -1e-9 * m[1:])
    assert m.min() >= 1 and m.max() <= n


@pytest.mark.slow
@pytest.mark.parametrize("d,n,eps", [(300, 100_000, 0.5), (1024, 200_000, 2.0), (500, 50_000, 4.0)])
def test_power_plugin_equals_the_naive_posterior_sum(plugins, d, n, eps):
    """The plugin's real path (interpolated posterior on Chebyshev nodes, fitted alpha) against the
    textbook O(n d) sum over every count k = 1..n ([W20] §IV; docs/algorithms.md §2.10)."""
    rng = np.random.default_rng(d + n)
    truth = rng.zipf(1.6, d).clip(max=n // 10).astype(float)
    est = estimate(truth / truth.sum() + rng.normal(0, 0, d), n=n, eps=eps)
    sd_f = math.sqrt(est.variance[0])
    est = est.replace(frequencies=truth / truth.sum() + rng.normal(0, sd_f, d))
    out = plugins.create("postprocessor", "power", {}).apply(est, rng).frequencies * n

    x, sigma = est.frequencies * n, sd_f * n
    k = np.arange(1, n + 1, dtype=float)
    # alpha from the mean equation, by bisection on a fine bracket (independent of the plugin's Brent)
    lo, hi = 1.0 + 1e-9, 20.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        w = np.exp(-mid * np.log(k) - (-mid * np.log(k)).max())
        if (k * w).sum() / w.sum() > x.mean():
            lo = mid
        else:
            hi = mid
    alpha = 0.5 * (lo + hi)
    log_prior = -alpha * np.log(k)
    naive = np.empty(d)
    for j in range(0, d, 64):  # blocks of items: memory, not speed
        logw = log_prior[None, :] - (x[j : j + 64, None] - k[None, :]) ** 2 / (2 * sigma**2)
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        naive[j : j + 64] = (w * k).sum(axis=1) / w.sum(axis=1)
    np.testing.assert_allclose(out, naive, rtol=1e-7)
