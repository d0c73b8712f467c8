"""Prior families ([JG19] §III-C; plugins/priors/families.py): the law, its moments, the
mean-variance fit (docs/algorithms.md §8.1), the engine's sums against exact ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench_plugins.numerics.posterior import prior_sums
from ldpbench_plugins.priors.families import (
    ALPHA_MAX,
    TINY_SCALE,
    Exponential,
    Gaussian,
    Laplace,
    Poisson,
    PowerLaw,
    Zipf,
)

N = 50_000


CASES = [
    (PowerLaw(), (1.7,), (1, N)),
    (PowerLaw(), (0.6,), (1, N)),
    (PowerLaw(), (3.5,), (1, N)),
    (Zipf(), (2.0,), (1, N)),
    (Gaussian(), (20_000.0, 800.0), (0, N)),
    (Gaussian(), (30.0, 60.0), (0, N)),  # truncated at 0
    (Laplace(), (10_000.0, 300.0), (0, N)),
    (Poisson(), (700.0,), (0, N)),
    (Poisson(), (3.0,), (0, N)),
    (Exponential(), (400.0,), (0, N)),
]


def brute(prior, theta, support):
    k = np.arange(support[0], support[1] + 1, dtype=float)
    lw = prior.log_weight(k, theta)
    w = np.exp(lw - lw.max())
    z = w.sum()
    mean = (k * w).sum() / z
    return lw.max() + math.log(z), mean, ((k - mean) ** 2 * w).sum() / z


def test_builtin_families_are_registered():
    names = builtin_plugins().registry("prior").names()
    for name in ("power-law", "zipf", "gaussian", "laplace", "poisson", "exponential"):
        assert name in names


@pytest.mark.parametrize(("prior", "theta", "support"), CASES, ids=lambda v: getattr(v, "name", None))
def test_engine_sums_match_exact_sums(prior, theta, support):
    log_z, mean, var = brute(prior, theta, support)
    got = prior_sums(prior, theta, support)
    assert got[0] == pytest.approx(log_z, rel=1e-10, abs=1e-10)
    assert got[1] == pytest.approx(mean, rel=1e-10)
    assert got[2] == pytest.approx(var, rel=1e-8)
    assert prior.moments(theta, support) == pytest.approx((mean, var), rel=1e-8)
    # the pmf is normalized on the support and zero outside it
    k = np.arange(support[0], support[1] + 1, dtype=float)
    assert np.exp(prior.log_pmf(k, theta, support)).sum() == pytest.approx(1.0, rel=1e-10)
    assert prior.log_pmf(np.array([support[0] - 1.0]), theta, support)[0] == -np.inf


@pytest.mark.parametrize(("prior", "theta", "support"), CASES, ids=lambda v: getattr(v, "name", None))
def test_effective_support_drops_only_negligible_weight(prior, theta, support):
    lo, hi = prior.effective_support(theta, support)
    assert support[0] <= lo <= hi <= support[1]
    k = np.arange(support[0], support[1] + 1, dtype=float)
    lw = prior.log_weight(k, theta)
    outside = (k < lo) | (k > hi)
    if outside.any():
        assert lw[outside].max() < lw.max() - 690


def test_gaussian_mean_variance_is_the_closed_form():  # A12
    rng = np.random.default_rng(0)
    x = rng.normal(1000, 300, 5000)
    sigma2 = 150.0**2
    mu, tau = Gaussian().fit_mean_variance(x, sigma2, (0, 10**6))
    assert mu == pytest.approx(x.mean(), rel=1e-14)
    assert tau**2 == pytest.approx(x.var() - sigma2, rel=1e-12)  # population variance (1/d)


def test_laplace_and_poisson_mean_variance_closed_forms():
    rng = np.random.default_rng(1)
    x = rng.normal(500, 400, 4000)
    mu, b = Laplace().fit_mean_variance(x, 100.0**2, (0, 10**6))
    assert mu == pytest.approx(x.mean(), rel=1e-14)
    assert 2 * b * b == pytest.approx(x.var() - 100.0**2, rel=1e-12)
    (lam,) = Poisson().fit_mean_variance(x, 100.0**2, (0, 10**6))
    assert lam == pytest.approx(x.mean(), rel=1e-14)


@pytest.mark.parametrize("target", [1.5, 12.0, 80.0, 2000.0])
def test_power_law_alpha_solves_the_mean_equation(target):  # A12: 1e-8 relative
    support = (1, 100_000)
    x = np.full(10, target)
    (alpha,) = PowerLaw().fit_mean_variance(x, 1.0, support)
    k = np.arange(1, support[1] + 1, dtype=float)
    w = k ** (-alpha)
    assert (k * w).sum() / w.sum() == pytest.approx(target, rel=1e-8)


def test_power_law_mean_out_of_reach_is_clamped():
    pl = PowerLaw()
    assert pl.fit_alpha(1.0, (1, 1000))[0] == pytest.approx(ALPHA_MAX)
    assert pl.fit_alpha(900.0, (1, 1000))[0] == 0.0  # above the uniform law's mean (500.5)


def test_exponential_mean_equation_on_the_support():
    support = (0, 5000)
    (beta,) = Exponential().fit_mean_variance(np.full(4, 37.0), 1.0, support)
    k = np.arange(0, support[1] + 1, dtype=float)
    w = np.exp(-k / beta)
    assert (k * w).sum() / w.sum() == pytest.approx(37.0, rel=1e-9)


def test_zipf_is_the_power_law_under_scipys_name():
    k = np.arange(1, 100, dtype=float)
    assert np.array_equal(Zipf().log_weight(k, (2.3,)), PowerLaw().log_weight(k, (2.3,)))
    assert Zipf.parameter_names == ("a",)


def test_no_spread_beyond_noise_gives_a_tiny_scale():
    x = np.array([10.0, 11.0, 9.0, 10.0])
    assert Gaussian().fit_mean_variance(x, 100.0, (0, 100))[1] == TINY_SCALE
    assert Laplace().fit_mean_variance(x, 100.0, (0, 100))[1] == TINY_SCALE


def test_power_law_support_must_exclude_zero():
    with pytest.raises(ValueError, match="support starting at 1"):
        PowerLaw().effective_support((2.0,), (0, 10))


def test_grad_log_weight_matches_finite_differences():
    k = np.linspace(1, 5000, 37)
    for prior, theta in [
        (PowerLaw(), (1.7,)),
        (Gaussian(), (800.0, 90.0)),
        (Laplace(), (700.3, 50.0)),
        (Poisson(), (300.0,)),
        (Exponential(), (250.0,)),
    ]:
        g = prior.grad_log_weight(k, theta)
        for j in range(len(theta)):
            h = 1e-6 * abs(theta[j])
            up, dn = list(theta), list(theta)
            up[j] += h
            dn[j] -= h
            fd = (prior.log_weight(k, up) - prior.log_weight(k, dn)) / (2 * h)
            np.testing.assert_allclose(g[j], fd, rtol=1e-5, atol=1e-7)
