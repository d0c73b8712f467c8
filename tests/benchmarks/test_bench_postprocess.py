"""Cost per estimate vector of every [W20] post-processor, and of the query metrics, at Kosarak scale.

d = 41,270 items, n = 8,019,015 users (the Kosarak-shaped stand-in: Zipf s = 1.5), OUE at eps = 1,
the estimate drawn as truth + Gaussian V-approx noise (the post-processors see only the vector and
the oracle's constants). Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_postprocess.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

import ldpbench_plugins.metrics.queries as queries
import ldpbench_plugins.postprocessors.power as power
from ldpbench.engine.pipeline import apply_pipeline
from ldpbench.types import Estimate, Population

D, N, EPS = 41_270, 8_019_015, 1.0
PLUGINS = builtin_plugins()


def _kosarak_like() -> tuple[Population, Estimate]:
    weights = np.arange(1, D + 1, dtype=float) ** -1.5
    counts = np.floor(N * weights / weights.sum()).astype(np.int64)
    counts[0] += N - counts.sum()
    truth = Population(counts)
    p, q = 0.5, 1.0 / (math.exp(EPS) + 1.0)
    var = q * (1 - q) / (N * (p - q) ** 2)
    f_hat = truth.frequencies + np.random.default_rng(0).normal(0.0, math.sqrt(var), D)
    support = N * (q + (p - q) * f_hat)
    est = Estimate(f_hat, N, EPS, "oue", p, q, np.full(D, var), support_counts=support)
    return truth, est


TRUTH, ESTIMATE = _kosarak_like()

PIPELINES = [
    ["base"],
    ["base-pos"],
    ["post-pos"],
    ["base-cut"],
    ["norm"],
    ["norm-mul"],
    ["norm-cut"],
    [("norm-cut", {"variant": "code"})],
    ["norm-sub"],
    [("norm-sub", {"algorithm": "iterative"})],
    ["mle-apx"],
    ["power"],
    ["power-ns"],
]


def _label(pipeline) -> str:
    return "+".join(
        s if isinstance(s, str) else f"{s[0]}({','.join(f'{k}={v}' for k, v in s[1].items())})" for s in pipeline
    )


@pytest.mark.parametrize("pipeline", PIPELINES, ids=_label)
def test_bench_postprocessor(benchmark, pipeline):
    names = [s if isinstance(s, str) else s[0] for s in pipeline]
    missing = [n for n in names if n not in PLUGINS.registry("postprocessor")]
    if missing:
        pytest.skip(f"not registered yet: {missing}")
    steps = [
        PLUGINS.create("postprocessor", s) if isinstance(s, str) else PLUGINS.create("postprocessor", *s)
        for s in pipeline
    ]
    rng = np.random.default_rng(1)
    out = benchmark(apply_pipeline, steps, ESTIMATE, rng)
    assert out.item_answers().min() >= 0 or names[-1] in ("base", "norm")


@pytest.mark.parametrize(
    ("name", "params"),
    [("mse", {}), ("set-query", {"rho": 10}), ("set-query", {"rho": 50}), ("topk-mse", {"k": 32})],
    ids=lambda x: x if isinstance(x, str) else ",".join(f"{k}={v}" for k, v in x.items()),
)
def test_bench_metric(benchmark, name, params):
    """One metric evaluation per pipeline; set-query's subsets are drawn once per cell (first call)."""
    m = PLUGINS.create("metric", name, params)
    m.score(TRUTH, ESTIMATE, np.random.default_rng(2))  # the cell's first pipeline draws the subsets

    def score() -> float:
        queries._SUMS.clear()  # set-query remembers the sums of a vector it has seen
        return m.score(TRUTH, ESTIMATE, np.random.default_rng(2))

    assert benchmark(score) >= 0


def test_bench_power_counts_uncached(benchmark):
    """Power's posterior means, computed afresh (``power`` and ``power-ns`` above reuse the last
    vector's: ``power._RECENT``)."""

    def counts() -> np.ndarray:
        power._RECENT.clear()
        return power.power_counts(ESTIMATE)[0]

    assert benchmark(counts).min() >= 0
