"""THE (plugins/oracles/the.py): the threshold that minimizes the variance, the Laplace-tail constants."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench_plugins.oracles.the import THE, noise_factor, optimal_theta


def test_the_threshold_minimizes_the_variance():
    for eps in (0.5, 1.0, 2.0, 4.0, 8.0):
        theta = optimal_theta(eps)
        assert 0.5 <= theta <= 1.0
        grid = np.linspace(0.5, 1.0, 2001)
        best = min(noise_factor(eps, t) for t in grid)
        assert noise_factor(eps, theta) <= best * (1 + 1e-9)
    assert THE(d=4, epsilon=1.0).threshold == optimal_theta(1.0)
    assert THE(d=4, epsilon=1.0, theta=0.8).threshold == 0.8


def test_the_constants_are_laplace_tails():
    eps, theta = 1.0, 0.8
    o = THE(d=4, epsilon=eps, theta=theta)
    b = 2 / eps
    assert o.p_star == pytest.approx(1 - 0.5 * math.exp((theta - 1) / b), rel=1e-15)
    assert o.q_star == pytest.approx(0.5 * math.exp(-theta / b), rel=1e-15)
