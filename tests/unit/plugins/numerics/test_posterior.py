"""The posterior engine behind Calibrate and Power (plugins/numerics/posterior.py; [JG19],
docs/algorithms.md §8.1): closed forms, quadrature against exact sums, the interpolation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench_plugins.numerics.posterior import interpolated_posterior, interpolated_posterior_mean, posterior
from ldpbench_plugins.priors.families import Gaussian, Laplace, Poisson, PowerLaw

# -- A12: the Gaussian-prior closed form ----------------------------------------------------------


@pytest.mark.parametrize("ratio", [1.0, 10.0])
def test_gaussian_prior_posterior_is_the_closed_form_a12(ratio):
    sigma = 40.0
    tau = max(20.0, ratio * sigma)
    mu = 20 * max(tau, sigma) + 1234.25
    support = (0, int(mu + 20 * max(tau, sigma)) + 1)
    x = np.linspace(mu - 6 * math.hypot(tau, sigma), mu + 6 * math.hypot(tau, sigma), 501)
    got = posterior(x, sigma, Gaussian(), (mu, tau), support).mean
    want = mu + tau**2 / (tau**2 + sigma**2) * (x - mu)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    ("prior", "theta", "support", "sigma"),
    [
        (PowerLaw(), (1.7,), (1, 100_000), 5_000.0),
        (PowerLaw(), (1.3,), (1, 100_000), 470.0),
        (Laplace(), (50_000.0, 15_000.0), (0, 100_000), 100.0),
        (Poisson(), (50_000.0,), (0, 100_000), 1_000.0),
    ],
    ids=lambda v: getattr(v, "name", None),
)
def test_quadrature_matches_exact_sums_at_larger_scale(prior, theta, support, sigma):
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.normal(0, 3 * sigma, 20),
            rng.uniform(-3 * sigma, support[1] + 3 * sigma, 20),
            np.exp(rng.uniform(0, math.log(support[1]), 20)),
            [-1e7, 1e9],
        ]
    )
    fast = posterior(x, sigma, prior, theta, support)
    ref = posterior(x, sigma, prior, theta, support, exact=True)
    assert fast.info["quadrature"]
    np.testing.assert_allclose(fast.mean, ref.mean, rtol=1e-9)
    np.testing.assert_allclose(fast.log_marginal, ref.log_marginal, rtol=1e-9)


def test_interpolated_posterior_matches_posterior():
    rng = np.random.default_rng(2)
    x = np.round(rng.normal(1000, 200, 20_000)) + rng.normal(0, 100, 20_000)
    a = posterior(x, 100.0, Gaussian(), (1000.0, 200.0), (0, 10**6))
    b = interpolated_posterior(x, 100.0, Gaussian(), (1000.0, 200.0), (0, 10**6))
    assert b.info.get("interpolated")
    np.testing.assert_allclose(b.log_marginal, a.log_marginal, rtol=1e-11)
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-11)


@pytest.mark.parametrize("size", [20_000, 50])  # interpolated, and the fallback to posterior()
def test_the_mean_alone_is_the_interpolated_posteriors_mean_bit_for_bit(size):
    """Power's path (interpolated_posterior_mean) skips the log-marginal, never changes the mean."""
    rng = np.random.default_rng(5)
    x = rng.exponential(300.0, size) + rng.normal(0, 40.0, size)
    full = interpolated_posterior(x, 40.0, PowerLaw(), (1.6,), (1, 10**6))
    mean = interpolated_posterior_mean(x, 40.0, PowerLaw(), (1.6,), (1, 10**6))
    assert bool(full.info.get("interpolated")) == (size > 1000)
    assert np.array_equal(mean.view(np.int64), full.mean.view(np.int64))


def test_estimates_must_be_finite():
    with pytest.raises(ValueError, match="NaN"):
        posterior(np.array([1.0, np.nan]), 10.0, PowerLaw(), (1.5,), (1, 100))


@pytest.mark.parametrize("panels", [1, 7, 100, 5000])
def test_occupied_panels_are_numpy_s_unique_and_inverse(panels):
    from ldpbench_plugins.numerics.posterior import _occupied_panels

    rng = np.random.default_rng(panels)
    p_all = rng.integers(0, panels, 900) // 3  # some panels empty
    occupied, inverse = _occupied_panels(p_all, panels)
    want, want_inverse = np.unique(p_all, return_inverse=True)
    assert occupied.dtype == want.dtype and inverse.dtype == want_inverse.dtype
    np.testing.assert_array_equal(occupied, want)
    np.testing.assert_array_equal(inverse, want_inverse)
