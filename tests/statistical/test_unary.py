"""Sparse unary reports (plugins/oracles/_unary.py): each position is drawn with probability q."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles.oue import bernoulli_positions


@pytest.mark.parametrize("q", [0.05, 0.3])  # geometric gaps / one uniform per position
def test_bernoulli_positions_hit_each_position_with_probability_q(q):
    rng = np.random.default_rng(1)
    length, reps = 40, 20_000
    hits = np.zeros(length)
    for _ in range(reps):
        hits[bernoulli_positions(length, q, rng)] += 1
    z = (hits - reps * q) / np.sqrt(reps * q * (1 - q))
    assert np.abs(z).max() < 5.5
