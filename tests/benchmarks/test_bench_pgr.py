"""Speed of PGR: per-user throughput at d = 1,024 and the aggregate path at Kosarak scale.

Figures (users per second = n / mean time)::

    .venv/bin/pytest tests/benchmarks/test_bench_pgr.py --benchmark-enable --benchmark-only \\
        --benchmark-columns=mean,min,rounds

The per-user path is O(t) per user plus the O(K q t) decoder; the aggregate path is O(K q t) plus
O(t) per user who lands on her hyperplane (about half of them at the default q). Kosarak scale is
d = 41,270 items, n = 8,019,015 users (a Zipf(1) stand-in): K = 88,573 (q = 3, t = 11) at eps = 1,
K = 151,740 (q = 53, t = 4) at eps = 4.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.simulate import simulate
from ldpbench_plugins.datasets.synthetic import apportion

PLUGINS = builtin_plugins()
KOSARAK_D, KOSARAK_N = 41_270, 8_019_015


def zipf_counts(d: int, n: int, s: float = 1.0) -> np.ndarray:
    return apportion(np.arange(1, d + 1, dtype=float) ** -s, n)


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_bench_pgr_per_user(benchmark, eps):
    d, n = 1_024, 1_000_000
    oracle = PLUGINS.create("oracle", "pgr", d=d, epsilon=eps)
    counts = zipf_counts(d, n)
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(path="per-user", d=d, n=n, epsilon=eps)
    est = benchmark(simulate, oracle, counts, rng, "per-user")
    assert est.n == n


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_bench_pgr_aggregate_kosarak(benchmark, eps):
    oracle = PLUGINS.create("oracle", "pgr", d=KOSARAK_D, epsilon=eps)
    counts = zipf_counts(KOSARAK_D, KOSARAK_N)
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(path="aggregate", d=KOSARAK_D, n=KOSARAK_N, epsilon=eps)
    est = benchmark(simulate, oracle, counts, rng, "aggregate")
    assert est.n == KOSARAK_N
