"""One cell (ldpbench/engine/cell.py) gives a post-processor no accidental path to the truth
(issue 10): no population helper, no frame above it holding the population."""

from __future__ import annotations

import sys

import ldpbench.engine.cell as engine
from ldpbench.engine.cell import CellTask, run_cell
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text
from ldpbench.types import Population, PostProcessor

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


def test_no_frame_above_a_post_processor_holds_the_population(plugins):
    from ldpbench import build_plugins

    class Module:
        @staticmethod
        def ldpbench_register_postprocessors(registry):
            registry.register(Snoop)

    from ldpbench import hookimpl

    Module.ldpbench_register_postprocessors = hookimpl(Module.ldpbench_register_postprocessors)
    mine = build_plugins(extra=[Module])
    spec = load_spec_text(
        "name: snoop\nseed: 1\nrepeats: 1\ndatasets: [{zipf: {d: 8, n: 500, s: 1.1}}]\nepsilons: [1]\n"
        "oracles: [grr]\npipelines: [snoop]\nmetrics: [mse]\n",
        mine,
    )
    cell = next(iter(expand(spec)))
    SEEN.clear()
    with engine.plugins_given(mine):
        rows = run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=mine.source))
    assert [r["error"] for r in rows] == [None]
    assert SEEN == []
