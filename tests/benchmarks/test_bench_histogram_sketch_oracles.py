"""Speed of SHE, THE, CMS and HCMS: per-user throughput at d = 1,024 and the aggregate path per
estimate at Kosarak scale (d = 41,270, n = 8,019,015; a Zipf(1) stand-in, as in
test_bench_oracles.py).

Figures (users per second = n / mean time)::

    .venv/bin/pytest tests/benchmarks/test_bench_histogram_sketch_oracles.py --benchmark-enable \\
        --benchmark-only --benchmark-columns=mean,min,rounds

Per-user sizes keep one run well under a few seconds: SHE and THE draw d Laplace variables per user,
CMS m = 1024 bits per user plus d hash evaluations, HCMS d hash evaluations (a fresh hash function
per user means reading a report costs O(d), as for OLH).

Measured on the shared 2-core box (load average 7-8 from other jobs, so these are upper bounds;
min over rounds): per user at d = 1,024, n = 20,000, eps = 1: SHE 0.38 s (53k users/s), THE 0.43 s
(46k users/s), CMS 0.28 s (72k users/s), HCMS 0.12 s (163k users/s). Aggregate at Kosarak scale,
eps = 1 / 4: SHE 2.1 / 2.2 ms, THE 5.9 / 5.6 ms, HCMS 6.9 / 4.5 ms, CMS 1.43 / 0.71 s (its exact
sampler draws d x window binomials, the window being ~15 standard deviations of K wide).
"""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.simulate import simulate
from ldpbench_plugins.datasets.synthetic import apportion

PLUGINS = builtin_plugins()
ORACLES = ("she", "the", "cms", "hcms")
KOSARAK_D, KOSARAK_N = 41_270, 8_019_015
PER_USER_D = 1_024
PER_USER_N = {"she": 20_000, "the": 20_000, "cms": 20_000, "hcms": 20_000}


def zipf_counts(d: int, n: int, s: float = 1.0) -> np.ndarray:
    return apportion(np.arange(1, d + 1, dtype=float) ** -s, n)


KOSARAK = zipf_counts(KOSARAK_D, KOSARAK_N)


@pytest.mark.parametrize("name", ORACLES)
def test_bench_per_user(benchmark, name):
    n = PER_USER_N[name]
    oracle = PLUGINS.create("oracle", name, d=PER_USER_D, epsilon=1.0)
    counts = zipf_counts(PER_USER_D, n)
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(path="per-user", d=PER_USER_D, n=n, epsilon=1.0)
    est = benchmark(simulate, oracle, counts, rng, "per-user")
    assert est.n == n


@pytest.mark.parametrize("eps", [1.0, 4.0])
@pytest.mark.parametrize("name", ORACLES)
def test_bench_aggregate_kosarak(benchmark, name, eps):
    oracle = PLUGINS.create("oracle", name, d=KOSARAK_D, epsilon=eps)
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(path="aggregate", d=KOSARAK_D, n=KOSARAK_N, epsilon=eps)
    est = benchmark(simulate, oracle, KOSARAK, rng, "aggregate")
    assert est.n == KOSARAK_N
