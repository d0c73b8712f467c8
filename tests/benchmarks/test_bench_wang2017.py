"""Speed of one sweep of the [W17] reproduction's grid (specs/wang2017_oracles.yaml), per oracle.

One sweep = one repeat of every (d, eps) cell of the spec: the aggregate draw, the estimate and its
full-domain MSE, without the harness around it (seeding, storage, leaderboard). Multiply by the
spec's repeats for the oracle's share of a full run; the harness's own overhead is the rest::

    .venv/bin/pytest tests/benchmarks/test_bench_wang2017.py --benchmark-enable --benchmark-only \\
        --benchmark-columns=mean,min,rounds
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from support import builtin_plugins

from ldpbench.engine.simulate import simulate

PLUGINS = builtin_plugins()
SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "specs" / "wang2017_oracles.yaml").read_text())
ORACLES = [o if isinstance(o, str) else next(iter(o)) for o in SPEC["oracles"]]
POPULATIONS = [PLUGINS.create("dataset", "zipf", entry["zipf"]).load(None) for entry in SPEC["datasets"]]


def sweep(name: str, rng: np.random.Generator) -> float:
    """Every cell of the grid once; returns the summed MSE (so nothing is optimised away)."""
    total = 0.0
    for pop in POPULATIONS:
        for eps in SPEC["epsilons"]:
            oracle = PLUGINS.create("oracle", name, {}, d=pop.d, epsilon=float(eps))
            est = simulate(oracle, pop.counts, rng, "aggregate")
            total += float(np.mean((est.frequencies - pop.frequencies) ** 2))
    return total


@pytest.mark.parametrize("name", ORACLES)
def test_bench_wang2017_sweep(benchmark, name):
    cells = len(POPULATIONS) * len(SPEC["epsilons"])
    benchmark.extra_info.update(cells=cells, domains=[p.d for p in POPULATIONS], epsilons=SPEC["epsilons"])
    total = benchmark(sweep, name, np.random.default_rng(0))
    assert np.isfinite(total) and total > 0
