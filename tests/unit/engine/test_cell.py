"""One cell (ldpbench/engine/cell.py) gives a post-processor no accidental path to the truth
(issue 10): no population helper, no frame above it holding the population."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import ldpbench.engine.cell as engine
from ldpbench.engine.cell import CellTask, run_cell
from ldpbench.params import Param
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text
from ldpbench.types import Metric, Population, PostProcessor

# -- no path to the truth ------------------------------------------------------------------------


def test_the_engine_has_no_module_level_population_helper():
    """Reproduction: ``ldpbench.engine.cell._population(dirs, dataset, seed)`` handed a post-processor the
    true counts."""
    assert not hasattr(engine, "_population")
    for name in vars(engine):
        assert "population" not in name.lower() or name in {"Population", "frozen_population", "checked_population"}, (
            name
        )


SEEN: list[str] = []


class Snoop(PostProcessor):
    """Walks every frame above it looking for the truth, as a careless plugin might."""

    name = "snoop"

    def apply(self, estimate, rng):
        frame = sys._getframe(1)
        while frame is not None:
            for key, value in frame.f_locals.items():
                if isinstance(value, Population):
                    SEEN.append(f"{frame.f_code.co_name}:{key}")
            frame = frame.f_back
        return estimate


@pytest.mark.parametrize(
    ("dataset", "mechanism", "outputs"),
    [("{zipf: {d: 8, n: 500, s: 1.1}}", "grr", 1), ("{correlated-attributes: {n: 500, a: 2, d: 4}}", "smp", 3)],
)
def test_no_frame_above_a_post_processor_holds_the_population(plugins, dataset, mechanism, outputs):
    from ldpbench import build_plugins

    class Module:
        @staticmethod
        def ldpbench_register_postprocessors(registry):
            registry.register(Snoop)

    from ldpbench import hookimpl

    Module.ldpbench_register_postprocessors = hookimpl(Module.ldpbench_register_postprocessors)
    mine = build_plugins(extra=[Module])
    spec = load_spec_text(
        f"name: snoop\nseed: 1\nrepeats: 1\ndatasets: [{dataset}]\nepsilons: [1]\n"
        f"oracles: [{mechanism}]\npipelines: [snoop]\nmetrics: [mse]\n",
        mine,
    )
    cell = next(iter(expand(spec)))
    SEEN.clear()
    with engine.plugins_given(mine):
        rows = run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=mine.source))
    assert [r["error"] for r in rows] == [None] * outputs
    assert SEEN == []


def test_a_tuple_populations_outputs_are_scored_against_their_attributes_marginals(plugins):
    import numpy as np

    from ldpbench.spec.seeding import rng_for
    from ldpbench_plugins.datasets.attributes import CorrelatedAttributes
    from ldpbench_plugins.protocols.spl import SPL

    spec = load_spec_text(
        "name: tuples\nseed: 3\nrepeats: 1\ndatasets: [{correlated-attributes: {n: 400, a: 2, d: 5}}]\n"
        "epsilons: [2]\noracles: [spl]\npipelines: [base]\nmetrics: [mse]\n",
        plugins,
    )
    cell = next(iter(expand(spec)))
    with engine.plugins_given(plugins):
        rows = run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source))
    assert [(r["oracle"], r["d"], r["n"], r["error"]) for r in rows] == [
        ("spl:a0", 5, 400, None),
        ("spl:a1", 5, 400, None),
        ("spl:attributes-mean", 10, 400, None),
    ]
    # the same run by hand: the protocol on the population with the cell's stream, each attribute's
    # estimate against its marginal
    pop = CorrelatedAttributes(n=400, a=2, d=5).load(np.random.default_rng(0))
    rng = rng_for(cell.seed, "mechanism", cell.dataset.label, cell.budget.label, cell.mechanism.label, cell.repeat)
    out = SPL().run(pop, 2.0, rng)
    for row, (j, name) in zip(rows, enumerate(pop.attributes.names)):
        truth = pop.attributes.marginal_counts(j) / 400
        assert row["value"] == np.mean((out[name].frequencies - truth) ** 2)


def test_a_tuple_populations_attribute_mean_row_averages_its_attributes_rows(plugins):
    import math

    spec = load_spec_text(
        "name: tuples\nseed: 3\nrepeats: 1\ndatasets: [{correlated-attributes: {n: 400, a: 3, d: 4}}]\n"
        "epsilons: [2]\noracles: [smp]\npipelines: [base]\nmetrics: [mse, l1]\n",
        plugins,
    )
    cell = next(iter(expand(spec)))
    with engine.plugins_given(plugins):
        rows = run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source))
    for metric in ("mse", "l1"):
        per = [r for r in rows if r["metric"] == metric and r["oracle"] != "smp:attributes-mean"]
        (mean,) = [r for r in rows if r["metric"] == metric and r["oracle"] == "smp:attributes-mean"]
        assert [r["oracle"] for r in per] == ["smp:a0", "smp:a1", "smp:a2"]
        assert sum(r["n"] for r in per) == 400  # smp: each attribute's n_j users
        assert mean["value"] == sum(r["value"] for r in per) / 3 and mean["error"] is None
        assert (mean["n"], mean["d"]) == (400, 12)
        theory = sum(r["theory"] for r in per) / 3
        assert math.isclose(mean["theory"], theory) or (math.isnan(theory) and math.isnan(mean["theory"]))


# -- every pipeline applied, then the metrics told them all (Metric.prepare) ---------------------

PREPARED: list[tuple[int, ...]] = []


class Prepared(Metric):
    """MSE that records what ``prepare`` was told (the sizes of the vectors), or raises there."""

    name = "prepared-test"
    params = (Param("fail", bool, False, "raise in prepare"),)

    def score(self, truth, estimate, rng):
        return float(np.mean((estimate.frequencies - truth.frequencies) ** 2))

    def prepare(self, truth, estimates, rng):
        if self.fail:
            raise RuntimeError("a prepare that fails loses only its speed-up")
        assert all(not e.frequencies.flags.writeable for e in estimates)  # read-only views
        PREPARED.append(tuple(len(e.frequencies) for e in estimates))


def _prepared_plugins():
    from ldpbench import build_plugins, hookimpl

    class Module:
        @staticmethod
        def ldpbench_register_metrics(registry):
            registry.register(Prepared)

    Module.ldpbench_register_metrics = hookimpl(Module.ldpbench_register_metrics)
    return build_plugins(extra=[Module])


def _rows(plugins, metrics: str, timeout: float | None = None) -> list[dict]:
    spec = load_spec_text(
        "name: prepared\nseed: 5\nrepeats: 1\ndatasets: [{zipf: {d: 300, n: 5000, s: 1.1}}]\nepsilons: [1]\n"
        f"oracles: [oue]\npipelines: [base, post-pos, norm-sub, power, base-cut]\nmetrics: {metrics}\n",
        plugins,
    )
    cell = next(iter(expand(spec)))
    with engine.plugins_given(plugins):
        task = CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), timeout=timeout, plugins=plugins.source)
        return run_cell(task)


def _numbers(rows: list[dict]) -> list[tuple]:
    """Each row's identity and numbers, floats by their bits."""
    return [
        (r["pipeline"], r["metric"], np.float64(r["value"]).tobytes(), np.float64(r["theory"]).tobytes(), r["error"])
        for r in rows
    ]


def test_metrics_are_told_every_pipeline_s_estimate_when_no_time_limit_is_in_force():
    mine = _prepared_plugins()
    PREPARED.clear()
    untimed = _rows(mine, "[prepared-test, mse]")
    assert PREPARED == [(300,) * 5]  # once per output, with every pipeline's estimate
    PREPARED.clear()
    timed = _rows(mine, "[prepared-test, mse]", timeout=600.0)
    assert PREPARED == []  # with a time limit each pipeline is scored as soon as applied
    assert _numbers(untimed) == _numbers(timed) and all(r["error"] is None for r in untimed)


def test_a_failing_prepare_changes_no_row():
    mine = _prepared_plugins()
    failing = "[{prepared-test: {fail: true}}, mse]"
    rows = _rows(mine, failing)
    assert _numbers(rows) == _numbers(_rows(mine, failing, timeout=600.0)) and all(r["error"] is None for r in rows)


def test_set_query_rows_are_the_same_bits_batched_or_pipeline_by_pipeline(plugins):
    import ldpbench_plugins.metrics.queries as queries

    metrics = "[{set-query: {rho: 10}}, {set-query: {rho: 50}}, {set-query: {rho: 73}}, mse]"
    queries._SUMS.clear()
    batched = _rows(plugins, metrics)
    queries._SUMS.clear()
    one_by_one = _rows(plugins, metrics, timeout=600.0)
    queries._SUMS.clear()
    assert _numbers(batched) == _numbers(one_by_one) and all(r["error"] is None for r in batched)
