"""Calibrate ([JG19]; plugins/postprocessors/calibrate.py, docs/algorithms.md §8.1): the plugin."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import hand_estimate

from ldpbench.errors import NotApplicable, ParamError
from ldpbench.types import Estimate
from ldpbench_plugins.numerics.noise import (
    significance_threshold,
)
from ldpbench_plugins.priors.families import PowerLaw

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
