"""Power and PowerNS ([W20], docs/algorithms.md §2.10-2.11, §8.1, A13): the plugin and its posterior."""

from __future__ import annotations

import numpy as np
import pytest
from support import oue_estimate

from ldpbench_plugins.numerics.posterior import posterior
from ldpbench_plugins.postprocessors.power import FALLBACK_ALPHA, power_counts
from ldpbench_plugins.priors.families import PowerLaw


def test_power_ns_is_norm_sub_after_power(plugins):
    rng = np.random.default_rng(1)
    est = oue_estimate(rng.normal(0.01, 0.03, 100))
    via_chain = plugins.create("postprocessor", "norm-sub", {}).apply(
        plugins.create("postprocessor", "power", {}).apply(est, rng), rng
    )
    direct = plugins.create("postprocessor", "power-ns", {}).apply(est, rng)
    np.testing.assert_allclose(direct.frequencies, via_chain.frequencies, rtol=0, atol=1e-12)


def test_alpha_solves_the_mean_equation():
    rng = np.random.default_rng(3)
    n = 20_000
    f = np.abs(rng.normal(0.01, 0.02, 100))
    counts, info = power_counts(oue_estimate(f, n=n))
    k = np.arange(1, n + 1, dtype=float)
    w = k ** -info["alpha"]
    assert (k * w).sum() / w.sum() == pytest.approx(n * f.mean(), rel=1e-6)
    assert counts.min() >= 1 and counts.max() <= n


def test_fallback_alpha_when_the_mean_is_below_one():
    counts, info = power_counts(oue_estimate(np.full(100, 0.5 / 10_000)))  # mean count 0.5
    assert info["alpha"] == FALLBACK_ALPHA and info["note"]


def test_power_equals_calibrate_with_a_power_law_prior(plugins):
    rng = np.random.default_rng(4)
    est = oue_estimate(np.abs(rng.normal(0.002, 0.004, 500)), n=200_000)
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


def test_power_reuses_a_result_only_for_the_same_vector_n_and_noise(plugins):
    # power and power-ns of one cell start from the same estimate: the second reuses the first's
    # posterior means, which must be exactly what a fresh computation gives
    import ldpbench_plugins.postprocessors.power as power

    rng = np.random.default_rng(8)
    est = oue_estimate(rng.normal(0.01, 0.03, 200))
    power._RECENT.clear()
    first, info = power_counts(est)
    first[:] = -1.0  # a caller's changes do not reach the remembered result
    info["support"].append(0)
    reused, reused_info = power_counts(est)
    power._RECENT.clear()
    fresh, fresh_info = power_counts(est)
    np.testing.assert_array_equal(reused, fresh)
    assert reused_info == fresh_info
    # one ulp in one entry, another n or another noise level: computed anew
    nudged = est.frequencies.copy()
    nudged[7] = np.nextafter(nudged[7], 1.0)
    for other in (est.replace(frequencies=nudged), est.replace(n=est.n + 1), est.replace(variance=est.variance * 4)):
        power._RECENT.clear()
        want, _ = power_counts(other)
        power_counts(est)
        got, _ = power_counts(other)
        np.testing.assert_array_equal(got, want)
    assert len(power._RECENT) == power._RECENT_SIZE
