"""Cost of one PEM run over 64-bit strings (docs/heavy-hitters.md), on both paths.

Zipf(1.1) over 10^5 random 64-bit items, eps = 4, k = 16, step_bits = 4 (16 rounds): the aggregate
path at n = 10^6 users (its cost grows with the distinct items, not with n) and the per-user path
at n = 10^5 (every report drawn and checked against k * 2^4 candidates per round). Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_pem.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.datasets.bitstrings import ZipfBits
from ldpbench_plugins.protocols.pem import PEM


@pytest.mark.parametrize(("simulation", "n"), [("aggregate", 1_000_000), ("per-user", 100_000)])
def test_bench_pem_run(benchmark, simulation, n):
    population = ZipfBits(bits=64, n=n, s=1.1, support=100_000).load(np.random.default_rng(0))
    pem = PEM(k=16)
    out = benchmark(lambda: pem.run(population, 4.0, np.random.default_rng(1), simulation=simulation))
    assert out["top-k"].items.size > 0
