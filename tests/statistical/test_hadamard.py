"""HR's samplers (plugins/oracles/_hadamard.py): the binomial split of a half at its edge sizes."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.oracles import _hadamard


def test_binomial_half_edge_sizes():
    rng = np.random.default_rng(5)
    n = np.array([0, 1, 63, 64, 65, 128, 129, 640, 641, 10_000], dtype=np.int32)
    draws = np.array([_hadamard.binomial_half(n, rng) for _ in range(4000)])
    assert draws.dtype == np.int32
    assert np.all(draws >= 0) and np.all(draws <= n)
    assert np.all(draws[:, 0] == 0)
    z = (draws[:, 1:].mean(axis=0) - n[1:] / 2) / np.sqrt(n[1:] / 4 / 4000)
    assert np.abs(z).max() < 5.5
    ratio = draws[:, 1:].var(axis=0, ddof=1) / (n[1:] / 4)
    assert np.all((ratio > 0.85) & (ratio < 1.15))
