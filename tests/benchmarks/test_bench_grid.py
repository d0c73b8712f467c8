"""The Kosarak-scale grid's hot kernel (``specs/kosarak_sweep.yaml``; docs/scale-out.md, "Cost
model"): one cell of 11 pipelines x 4 metrics, one repeat's bundle of its 4 oracles' cells, and
a cell's set-query sums (one sparse product per vector, or one for all 11 pipelines).

A cell's cost once its worker holds the population and the repeat's set-query subsets (what every
cell but the first of a repeat pays), and a bundle's with the subsets drawn afresh (what a worker
pays per repeat). Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_grid.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import builtin_plugins

import ldpbench.engine.cell as engine
import ldpbench_plugins.metrics.queries as queries
from ldpbench.engine.cell import CellTask, bundle_tasks, run_bundle, run_cell
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec

SPEC = Path(__file__).resolve().parents[2] / "specs" / "kosarak_sweep.yaml"
PLUGINS = builtin_plugins()


@pytest.fixture(scope="module")
def tasks() -> list[CellTask]:
    spec = load_spec(SPEC, PLUGINS)
    cells = [c for c in expand(spec) if c.budget.label == "1" and c.repeat == 0]  # eps = 1, repeat 0
    return [CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), plugins=PLUGINS.source) for c in cells]


@pytest.mark.parametrize("oracle", ["grr", "olh", "oue", "hr"])
def test_bench_grid_cell(benchmark, tasks, oracle):
    task = next(t for t in tasks if t.cell.mechanism.name == oracle)

    def again() -> list:
        queries._SUMS.clear()  # no sums remembered from the previous round
        return run_cell(task)

    with engine.plugins_given(PLUGINS):
        run_cell(task)  # loads the population, draws the repeat's subsets
        rows = benchmark(again)
    assert len(rows) == 44 and all(r["error"] is None for r in rows)


def test_bench_grid_bundle_with_fresh_draws(benchmark, tasks):
    (bundle,) = bundle_tasks(tasks)

    def fresh() -> list:
        queries._DRAWN.clear()  # a worker's first bundle of this repeat
        queries._SUMS.clear()
        return run_bundle(bundle)

    with engine.plugins_given(PLUGINS):
        run_cell(tasks[0])  # the population is loaded once per worker, not per bundle
        cells = benchmark(fresh)
    assert [len(rows) for rows in cells] == [44] * 4


D = 41_270  # the sweep's domain


@pytest.fixture(scope="module")
def subsets_and_vectors() -> tuple[list, list[np.ndarray]]:
    """The sweep's two subset families (100 subsets of 10% and of 50% of d) and 11 vectors (a
    cell's pipelines)."""
    rng = np.random.default_rng(0)
    families = [queries._Subsets(D, round(rho * D / 100), 100, rng) for rho in (10, 50)]
    return families, [rng.random(D) / D for _ in range(11)]


@pytest.mark.parametrize("how", ["one-product-per-vector", "one-product-for-11"])
def test_bench_set_query_sums_of_a_cell(benchmark, subsets_and_vectors, how):
    """The set-query sums of a cell's 11 pipelines over both subset families: 22 products, or two
    of 11 columns (``_Subsets.remember_sums``, what ``SetQuery.prepare`` does)."""
    families, vectors = subsets_and_vectors

    def sums() -> list:
        queries._SUMS.clear()
        if how == "one-product-for-11":
            for subsets in families:
                subsets.remember_sums(vectors)
        return [subsets.sums(x) for subsets in families for x in vectors]

    got = benchmark(sums)
    assert len(got) == 22 and all(s.shape == (100,) for s in got)
