"""Calibrate (power-law prior, mean-variance fit) per estimate vector at Kosarak scale.

d = 41,270 items, n = 8,019,015 users (Zipf s = 1 stand-in), OUE at eps = 1..5: the whole
post-processor (fit + posterior means of all d items). Target: <= 0.5 s per vector. Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_calibrate.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.types import Estimate

D, N = 41_270, 8_019_015
PLUGINS = builtin_plugins()


def kosarak_like_estimate(eps: float) -> Estimate:
    weights = np.arange(1, D + 1, dtype=float) ** -1.0
    counts = np.floor(N * weights / weights.sum())
    counts[0] += N - counts.sum()
    p, q = 0.5, 1.0 / (math.exp(eps) + 1.0)
    var = q * (1 - q) / (N * (p - q) ** 2)
    f_hat = counts / N + np.random.default_rng(int(eps)).normal(0.0, math.sqrt(var), D)
    return Estimate(f_hat, N, eps, "oue", p, q, np.full(D, var))


@pytest.mark.parametrize("eps", [1, 2, 3, 4, 5])
def test_bench_calibrate_kosarak_scale(benchmark, eps):
    est = kosarak_like_estimate(eps)
    cal = PLUGINS.create("postprocessor", "calibrate", {"prior": "power-law"})
    rng = np.random.default_rng(0)
    out = benchmark(cal.apply, est, rng)
    assert out.frequencies.shape == (D,) and np.all(np.isfinite(out.frequencies))


@pytest.mark.parametrize("name", ["power", "power-ns"])
def test_bench_power_kosarak_scale(benchmark, name):
    est = kosarak_like_estimate(1)
    post = PLUGINS.create("postprocessor", name, {})
    out = benchmark(post.apply, est, np.random.default_rng(0))
    assert np.all(out.frequencies >= 0)


@pytest.mark.parametrize("eps", [1, 5])
def test_bench_calibrate_mle_fit_kosarak_scale(benchmark, eps):
    """The power-law prior fitted by maximum likelihood ([JG19] Eq. 16): an L-BFGS-B fit over the
    interpolated marginal likelihood, then the posterior means (0.17-0.24 s per vector measured)."""
    est = kosarak_like_estimate(eps)
    cal = PLUGINS.create("postprocessor", "calibrate", {"prior": "power-law", "fit": "mle"})
    out = benchmark.pedantic(cal.apply, args=(est, np.random.default_rng(0)), rounds=3, iterations=1)
    assert out.info["calibrate"]["fit"] == "mle" and np.all(np.isfinite(out.frequencies))
