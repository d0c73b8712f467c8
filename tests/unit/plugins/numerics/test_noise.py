"""Noise levels and significance thresholds (plugins/numerics/noise.py; [JG19], docs/algorithms.md §8.1, A9-A10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import hand_estimate, oue_pq

from ldpbench_plugins.numerics.noise import (
    count_noise_variance,
    epsilon_for_noise,
    estimate_threshold,
    significance_quantile,
    significance_threshold,
)

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
