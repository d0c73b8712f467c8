"""Power and PowerNS ([W20], docs/algorithms.md §2.10-2.11, §8.1): the A8 properties and the naive posterior sum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import oue_estimate


def a8_vectors():
    """A8: entries N(1/d, (3/d)^2) for d in {1, 2, 7, 100, 1000}, plus all-negative and all-positive."""
    rng = np.random.default_rng(2024)
    for d in (1, 2, 7, 100, 1000):
        for _ in range(40):
            yield rng.normal(1 / d, 3 / d, d)
        yield -np.abs(rng.normal(1 / d, 3 / d, d))
        yield np.abs(rng.normal(1 / d, 3 / d, d))


def test_power_and_power_ns_a8_properties(plugins):
    power = plugins.create("postprocessor", "power", {})
    power_ns = plugins.create("postprocessor", "power-ns", {})
    rng = np.random.default_rng(0)
    for f in a8_vectors():
        est = oue_estimate(f)
        out = power.apply(est, rng).frequencies
        assert np.all(out >= 0) and np.all(out >= 1 / est.n - 1e-15) and np.all(out <= 1 + 1e-12)
        ns = power_ns.apply(est, rng).frequencies
        assert np.all(ns >= 0)
        assert abs(ns.sum() - 1) <= 1e-9


@pytest.mark.parametrize("d,n,eps", [(300, 100_000, 0.5), (1024, 200_000, 2.0), (500, 50_000, 4.0)])
def test_power_plugin_equals_the_naive_posterior_sum(plugins, d, n, eps):
    """The plugin's real path (interpolated posterior on Chebyshev nodes, fitted alpha) against the
    textbook O(n d) sum over every count k = 1..n ([W20] §IV; docs/algorithms.md §2.10)."""
    rng = np.random.default_rng(d + n)
    truth = rng.zipf(1.6, d).clip(max=n // 10).astype(float)
    est = oue_estimate(truth / truth.sum() + rng.normal(0, 0, d), n=n, eps=eps)
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
