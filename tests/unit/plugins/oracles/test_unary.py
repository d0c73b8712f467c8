"""Sparse unary reports (plugins/oracles/_unary.py): sorted, distinct positions in range."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.oracles.oue import bernoulli_positions


def test_bernoulli_positions_are_sorted_distinct_and_in_range():
    rng = np.random.default_rng(0)
    for length, q in [(0, 0.3), (10, 0.0), (10, 1.0), (1, 0.5), (100_000, 0.01), (50_000, 0.45)]:
        pos = bernoulli_positions(length, q, rng)
        assert pos.dtype == np.int64
        assert np.all(np.diff(pos) > 0) and (pos.size == 0 or (pos[0] >= 0 and pos[-1] < length))
        if q in (0.0, 1.0):
            assert pos.size == (length if q == 1.0 else 0)
