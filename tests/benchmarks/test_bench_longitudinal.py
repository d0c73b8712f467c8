"""Cost of one run of a memoized longitudinal protocol (docs/longitudinal.md), on both paths.

``l-sue`` (basic RAPPOR's layers) over d = 64, T = 10 rounds, Zipf(1.1) users who re-draw with
probability 0.1 per round, eps_inf = 2: the per-user path at n = 20,000 (every PRR and every one of
the n T d instantaneous bits drawn, ``_longitudinal.bernoulli_bits``) and the exact aggregate path
at n = 1,000,000 (pairs found by comparing rounds, binomials per activity pattern). Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_longitudinal.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench import build_plugins


@pytest.mark.parametrize(("simulation", "n"), [("per-user", 20_000), ("aggregate", 1_000_000)])
def test_bench_l_sue_run(benchmark, simulation, n):
    plugins = build_plugins()
    params = {"d": 64, "n": n, "s": 1.1, "rounds": 10, "r": 0.1}
    population = plugins.create("dataset", "zipf-rounds", params).load(np.random.default_rng(0))
    protocol = plugins.create("protocol", "l-sue")
    out = benchmark(lambda: protocol.run(population, 2.0, np.random.default_rng(1), simulation=simulation))
    assert len(out) == 11  # ten rounds and their mean
    assert all(np.isfinite(e.frequencies).all() for e in out.values())
