"""Calibrate ([JG19]) and its posterior engine: docs/algorithms.md §8.1, and the plugin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench import build_plugins
from ldpbench.errors import NotApplicable, ParamError
from ldpbench.types import Estimate
from ldpbench_plugins.numerics.noise import (
    count_noise_variance,
    epsilon_for_noise,
    estimate_threshold,
    significance_quantile,
    significance_threshold,
)
from ldpbench_plugins.numerics.posterior import interpolated_posterior, posterior
from ldpbench_plugins.priors.families import Exponential, Gaussian, Laplace, Poisson, PowerLaw


def oue_pq(eps: float) -> tuple[float, float]:
    return 0.5, 1.0 / (math.exp(eps) + 1.0)


def hand_estimate(counts: np.ndarray, n: int, eps: float, rng: np.random.Generator, noise: bool = True) -> Estimate:
    """An OUE-like estimate built by hand (fraction scale, V-approx variance, p*, q*)."""
    p, q = oue_pq(eps)
    var = q * (1 - q) / (n * (p - q) ** 2)
    f = np.asarray(counts, dtype=float) / n
    if noise:
        f = f + rng.normal(0.0, math.sqrt(var), f.size)
    return Estimate(f, n, eps, "oue", p, q, np.full(f.size, var))


@pytest.fixture(scope="module")
def plugins():
    return build_plugins()


# -- A9, A10: thresholds and noise levels ---------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "d", "quantile", "thetas"),
    [
        (8_019_015, 41_270, 4.7145, {1: 25_620.0, 4: 3_681.0, 5: 2_206.6}),  # Kosarak
        (908_576, 16_470, 4.5239, {1: 8_275.1, 4: 1_188.9, 5: 712.7}),  # Retail
    ],
)
def test_significance_thresholds_a9(n, d, quantile, thetas):
    assert significance_quantile(d) == pytest.approx(quantile, abs=5e-5)
    for eps, theta in thetas.items():
        sigma = math.sqrt(count_noise_variance(n, *oue_pq(eps)))
        assert significance_threshold(sigma, d) == pytest.approx(theta, abs=0.1)
        est = hand_estimate(np.zeros(d), n, eps, np.random.default_rng(0), noise=False)
        assert estimate_threshold(est) * n == pytest.approx(theta, abs=0.1)


def test_5434_is_a_standard_deviation_a10():
    n = 8_019_015
    var = count_noise_variance(n, *oue_pq(1.0))
    assert var == pytest.approx(29_531_581, rel=1e-6)
    assert math.sqrt(var) == pytest.approx(5_434.3, abs=0.05)
    assert epsilon_for_noise(5434, n, oue_pq, "sd") == pytest.approx(1.000, abs=0.001)
    assert epsilon_for_noise(5434, n, oue_pq, "variance") == pytest.approx(8.68, abs=0.005)
    for eps, sd in {2: 2_409.6, 3: 1_329.9, 4: 780.8, 5: 468.0}.items():
        assert math.sqrt(count_noise_variance(n, *oue_pq(eps))) == pytest.approx(sd, abs=0.05)


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


@pytest.mark.slow
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


def test_estimates_must_be_finite():
    with pytest.raises(ValueError, match="NaN"):
        posterior(np.array([1.0, np.nan]), 10.0, PowerLaw(), (1.5,), (1, 100))


# -- the plugin -----------------------------------------------------------------------------------


def test_calibrate_records_prior_and_returns_fractions(plugins):
    rng = np.random.default_rng(5)
    n, d = 200_000, 3_000
    counts = np.floor(n * (np.arange(1, d + 1) ** -1.1) / (np.arange(1, d + 1) ** -1.1).sum())
    est = hand_estimate(counts, n, 3.0, rng)
    out = plugins.create("postprocessor", "calibrate", {}).apply(est, rng)
    info = out.info["calibrate"]
    assert info["prior"] == "power-law" and info["fit"] == "mean-variance" and info["support"] == [1, n]
    alpha = info["params"]["alpha"]
    assert PowerLaw().mean_at(alpha, (1, n)) == pytest.approx((est.frequencies * n).mean(), rel=1e-8)
    assert info["noise_sd"] == pytest.approx(math.sqrt(est.variance[0]) * n)
    assert out.n == n and out.variance is est.variance  # the noise model travels on
    f = out.frequencies
    assert f.min() >= 1 / n - 1e-15 and f.max() <= 1.0
    mse_raw = ((est.frequencies - counts / n) ** 2).mean()
    assert ((f - counts / n) ** 2).mean() < mse_raw / 5


def test_calibrate_with_fixed_prior_params_and_zero_below(plugins):
    rng = np.random.default_rng(6)
    n, d = 100_000, 500
    est = hand_estimate(rng.integers(0, 50, d), n, 2.0, rng)
    cal = plugins.create(
        "postprocessor",
        "calibrate",
        {"prior": "gaussian", "prior_params": {"mu": 25.0, "tau": 15.0}, "zero_below": "significance"},
    )
    out = cal.apply(est, rng)
    info = out.info["calibrate"]
    assert info["fit"] == "fixed" and info["params"] == {"mu": 25.0, "tau": 15.0}
    theta = significance_threshold(info["noise_sd"], d)
    assert info["zero_below"] == pytest.approx(theta)
    assert np.all(out.frequencies == 0)  # every posterior mean is far below theta here
    with pytest.raises(ParamError, match="missing: tau"):
        plugins.create("postprocessor", "calibrate", {"prior": "gaussian", "prior_params": {"mu": 1.0}}).apply(est, rng)


def test_zero_rule_compares_the_calibrated_value_or_the_raw_estimate(plugins):
    # [JG19] §IV-B does not say which frequencies it compares with T after Calibrate: both readings.
    rng = np.random.default_rng(6)
    n, d = 100_000, 500
    est = hand_estimate(rng.integers(0, 50, d), n, 2.0, rng)
    fixed = {"prior": "gaussian", "prior_params": {"mu": 25.0, "tau": 15.0}}
    plain = plugins.create("postprocessor", "calibrate", fixed).apply(est, rng)
    sigma = plain.info["calibrate"]["noise_sd"]
    T = significance_threshold(sigma, d)
    x = n * est.frequencies
    x[:3] = [T * (1 + 1e-9), T * 1.5, T * 0.999]  # raw estimates just above, above and just below T
    est = est.replace(frequencies=x / n)
    plain = plugins.create("postprocessor", "calibrate", fixed).apply(est, rng).frequencies * n
    assert np.all(plain[:3] < T)  # the prior pulls all three far below T
    by_value = plugins.create("postprocessor", "calibrate", {**fixed, "zero_below": "significance"}).apply(est, rng)
    by_raw = plugins.create(
        "postprocessor", "calibrate", {**fixed, "zero_below": "significance", "zero_rule": "raw"}
    ).apply(est, rng)
    assert np.all(by_value.frequencies == 0)
    np.testing.assert_allclose(by_raw.frequencies[:3] * n, [plain[0], plain[1], 0.0], rtol=1e-12)
    assert np.all(by_raw.frequencies[3:][x[3:] < T] == 0)
    assert by_raw.info["calibrate"]["zero_rule"] == "raw"


def test_calibrate_warns_when_estimates_show_no_spread(plugins):
    rng = np.random.default_rng(8)
    est = hand_estimate(np.full(300, 40), 50_000, 1.0, rng, noise=False)  # var(f_hat) = 0 < sigma^2
    out = plugins.create("postprocessor", "calibrate", {"prior": "laplace"}).apply(est, rng)
    assert out.warnings and all(w.startswith("calibrate: ") for w in out.warnings)


def test_calibrate_needs_a_noise_model(plugins):
    est = Estimate(np.full(10, 0.1), 1000, 1.0, "mystery")
    with pytest.raises(NotApplicable, match="noise"):
        plugins.create("postprocessor", "calibrate", {}).apply(est, np.random.default_rng(0))


def test_unknown_prior_and_fit_are_rejected(plugins):
    with pytest.raises(ParamError):
        plugins.create("postprocessor", "calibrate", {"prior": "powerlaw"})
    with pytest.raises(ParamError, match="mean-variance"):
        plugins.create("postprocessor", "calibrate", {"fit": "moments"})


@pytest.mark.parametrize("oracle", ["grr", "olh", "oue", "hr"])
def test_calibrate_works_for_every_pure_oracle(plugins, oracle):
    rng = np.random.default_rng(11)
    d, n = 64, 200_000
    pop = plugins.create("dataset", "zipf", {"d": d, "n": n, "s": 1.3}).load(rng)
    fo = plugins.create("oracle", oracle, {}, d=d, epsilon=2.0)
    est = fo.estimate(
        fo.sample_support_counts(pop.counts, rng)
        if oracle != "grr"
        else fo.support_counts_from_histogram(fo.sample_report_histogram(pop.counts, rng)),
        n,
    )
    out = plugins.create("postprocessor", "calibrate", {}).apply(est, rng)
    assert np.all(np.isfinite(out.frequencies)) and out.frequencies.min() > 0
    assert out.info["calibrate"]["noise_sd"] == pytest.approx(math.sqrt(fo.noise_variance(n)) * n)


@pytest.mark.slow
def test_mle_fit_never_loses_likelihood(plugins):
    rng = np.random.default_rng(12)
    n, d = 1_000_000, 1_500
    counts = np.round(rng.laplace(600, 120, d)).clip(0)
    est = hand_estimate(counts, n, 4.0, rng)
    x, sigma = est.frequencies * n, math.sqrt(est.variance[0]) * n
    fam = Laplace()
    mv = fam.fit_mean_variance(x, sigma**2, (0, n))
    ml = fam.fit_mle(x, sigma**2, (0, n))
    ll = lambda th: posterior(x, sigma, fam, th, (0, n)).log_marginal.sum()  # noqa: E731
    assert ll(ml) >= ll(mv) - 1e-6
    out = plugins.create("postprocessor", "calibrate", {"prior": "laplace", "fit": "mle"}).apply(est, rng)
    assert out.info["calibrate"]["params"] == pytest.approx(dict(zip(fam.parameter_names, ml)), rel=1e-9)


@pytest.mark.slow
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
