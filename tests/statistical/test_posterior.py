"""The posterior engine (plugins/numerics/posterior.py; docs/algorithms.md §8.1, A13): the posterior
mean is monotone and within the support, windowing changes nothing, and the interpolation that
Calibrate and Power use matches the windowed sums."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.numerics.posterior import interpolated_posterior, posterior
from ldpbench_plugins.priors.families import Exponential, Gaussian, Laplace, Poisson, PowerLaw

# -- A13: monotone, within the support, windowing on = off ----------------------------------------

SMALL_N = 5_000


A13_CASES = [
    (PowerLaw(), (1.6,), (1, SMALL_N), 150.0),
    (PowerLaw(), (2.4,), (1, SMALL_N), 20.0),
    (PowerLaw(), (1.1,), (1, SMALL_N), 4.0),
    (Gaussian(), (2_000.0, 300.0), (0, SMALL_N), 100.0),
    (Laplace(), (1_500.0, 200.0), (0, SMALL_N), 60.0),
    (Poisson(), (900.0,), (0, SMALL_N), 50.0),
    (Exponential(), (300.0,), (0, SMALL_N), 80.0),
]


@pytest.mark.parametrize(("prior", "theta", "support", "sigma"), A13_CASES, ids=lambda v: getattr(v, "name", None))
def test_posterior_mean_monotone_in_support_and_window_exact_a13(prior, theta, support, sigma):
    x = np.linspace(-10 * sigma, SMALL_N + 10 * sigma, 10_000)
    fast = posterior(x, sigma, prior, theta, support)
    m = fast.mean
    assert np.all(np.diff(m) >= -1e-9 * np.abs(m[1:]))
    assert m.min() >= support[0] - 1e-9 and m.max() <= support[1] + 1e-9
    ref = posterior(x[::10], sigma, prior, theta, support, exact=True)
    np.testing.assert_allclose(m[::10], ref.mean, rtol=1e-9)
    np.testing.assert_allclose(fast.log_marginal[::10], ref.log_marginal, rtol=1e-9)


@pytest.mark.parametrize(("prior", "theta", "support", "sigma"), A13_CASES, ids=lambda v: getattr(v, "name", None))
def test_interpolation_used_by_calibrate_and_power_matches_the_windowed_sums(prior, theta, support, sigma):
    # Calibrate and Power evaluate the posterior on Chebyshev nodes and interpolate (10x faster at
    # Kosarak scale); the estimates here are heavy-tailed like an oracle's output on Zipf data.
    rng = np.random.default_rng(11)
    truth = np.minimum(np.round(SMALL_N * rng.pareto(1.2, 40_000) / 50), SMALL_N)
    x = truth + rng.normal(0, sigma, truth.size)
    a = posterior(x, sigma, prior, theta, support)
    b = interpolated_posterior(x, sigma, prior, theta, support)
    # with few estimates per sigma-wide panel it falls back to the windowed sums themselves
    assert bool(b.info.get("interpolated")) == (sigma >= 20)
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-7, atol=1e-7 * sigma)
    np.testing.assert_allclose(b.log_marginal, a.log_marginal, rtol=1e-7)
