"""Cost of one Blender run and of its metrics at the size of [A17]'s AOL sample.

A synthetic record population with n = 657,427 users (one record each) over 200,000 records
(20,000 queries x 10 URLs, Zipf), eps = 4, 5% opt-in, M = 50; the client side by the aggregate
sampler and by LocalAlg on every client. Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_blender.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.types import Population

PLUGINS = builtin_plugins()
N, QUERIES, URLS = 657_427, 20_000, 10


def _records() -> Population:
    rng = np.random.default_rng(0)
    pq = np.arange(1, QUERIES + 1) ** -0.8
    pu = np.arange(1, URLS + 1) ** -2.0
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    return Population(rng.multinomial(N, p), parents=np.repeat(np.arange(QUERIES), URLS))


TRUTH = _records()


@pytest.mark.parametrize("sampler", ["aggregate", "per-user"])
def test_bench_blender_run(benchmark, sampler):
    blender = PLUGINS.create("protocol", "blender", {"client_sampler": sampler})
    out = benchmark(lambda: blender.run(TRUTH, 4.0, np.random.default_rng(1)))
    assert set(out) == {"opt-in", "client", "blended"}


@pytest.mark.parametrize(
    "name,params",
    [("ndcg", {"k": 10}), ("ndcg", {"k": 10, "structure": "list-of-lists"}), ("l1", {"top": 50})],
)
def test_bench_metrics_on_a_full_domain_estimate(benchmark, name, params):
    """The metrics on an oracle-sized estimate (all 200,000 records), the costly case."""
    metric = PLUGINS.create("metric", name, params)
    from ldpbench.types import Estimate

    noisy = TRUTH.frequencies + np.random.default_rng(2).normal(0, 3e-4, TRUTH.d)
    est = Estimate(noisy, N, 4.0)
    value = benchmark(lambda: metric.score(TRUTH, est, np.random.default_rng(3)))
    assert np.isfinite(value)
