"""Cost per estimate of EM and its corrections ([MHS18]), at d = 224 (adult) and d = 16,470 (Retail).

``em-rilstone`` is the plug-in second-order step (one d x d solve after EM); ``em-murakami`` is
[MHS18]'s Algorithm 2 (one simulated data set of N users, so two EM runs and two solves), which
refuses d > 4,096 and so runs on adult only.

Workloads (GRR, aggregate path, the estimate drawn once outside the timed body):

- ``mix-1070``: [MHS18]'s personalized budgets, N = 1070 users drawn from the population
  (500 at eps 0.1, 500 at 2, 50 at ln d, 20 at inf) -- the small-sample setting;
- ``lnd-full``: every user of the population at eps = ln d (adult: n = 48,842; Retail: n = 908,577).

(Everyone at eps = 2 is a poor Retail workload: GRR over 16,470 items then has a per-item noise sd
of about 0.7, the likelihood is nearly flat and EM, even accelerated, uses its 10,000 maps:
about 25 s per estimate on an idle core.)

Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_em.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.groups import simulate_groups

PLUGINS = builtin_plugins()
MIX = [(0.1, 500), (2.0, 500), ("ln", 50), (math.inf, 20)]


def _estimate(dataset: str, workload: str):
    pop = PLUGINS.create("dataset", dataset, {}).load(np.random.default_rng(0))
    make = lambda eps: PLUGINS.create("oracle", "grr", {}, d=pop.d, epsilon=eps)  # noqa: E731
    if workload == "mix-1070":
        groups = [(math.log(pop.d) if eps == "ln" else eps, n) for eps, n in MIX]
    else:
        groups = [(math.log(pop.d), pop.n)]
    return simulate_groups(make, pop, groups, np.random.default_rng(1))


@pytest.mark.parametrize("dataset", ["adult", "retail"])
@pytest.mark.parametrize("workload", ["mix-1070", "lnd-full"])
@pytest.mark.parametrize("method", ["em", "em-rilstone"])
def test_bench_em(benchmark, dataset, workload, method):
    est = _estimate(dataset, workload)
    post = PLUGINS.create("postprocessor", method, {})
    out = benchmark(post.apply, est, np.random.default_rng(0))
    benchmark.extra_info.update({k: out.info[k] for k in ("em_iterations", "em_converged")})
    assert abs(out.frequencies.sum() - 1) <= 1e-9


@pytest.mark.parametrize("workload", ["mix-1070", "lnd-full"])
def test_bench_em_murakami_adult(benchmark, workload):
    est = _estimate("adult", workload)
    post = PLUGINS.create("postprocessor", "em-murakami", {})
    out = benchmark(post.apply, est, np.random.default_rng(0))
    assert abs(out.frequencies.sum() - 1) <= 1e-9 and "alpha" in out.info["diagnostics"]


def test_bench_em_bootstrap_adult(benchmark):
    est = _estimate("adult", "mix-1070")
    post = PLUGINS.create("postprocessor", "em-bootstrap", {"replicates": 20})
    out = benchmark(post.apply, est, np.random.default_rng(0))
    assert abs(out.frequencies.sum() - 1) <= 1e-9
