"""The runner (ldpbench/runner.py).

It reads ``results.jsonl`` once: its leaderboard, built from the stored rows and the rows it
appended, is the one the folder gives when read back (fresh, resumed, rerun, and with rows of an
older version of the spec in the folder). Its default executors are declared by the executors.
"""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from support import builtin_plugins

import ldpbench
from ldpbench.leaderboard.load import run_leaderboard
from ldpbench.results.read import read_run

SPEC = {
    "name": "one-read",
    "seed": 11,
    "repeats": 3,
    "datasets": [{"zipf": {"d": 16, "n": 3000, "s": 1.2}}],
    "epsilons": [1, 2],
    "oracles": ["grr", "oue"],
    "pipelines": ["base", "norm-sub"],
    "metrics": ["mse", "l1"],
}


def _same_as_read_back(outcome) -> None:
    assert_frame_equal(outcome.leaderboard, run_leaderboard(read_run(outcome.out_dir)))


def test_fresh_resumed_and_rerun_runs_match_the_folder(tmp_path):
    out = tmp_path / "out"
    first = ldpbench.run({**SPEC, "repeats": 2}, out, workers=1)
    _same_as_read_back(first)
    resumed = ldpbench.run(SPEC, out, workers=1)  # repeat 2 is new, repeats 0-1 are reused
    assert resumed.cells_skipped > 0 and resumed.cells_run > 0
    _same_as_read_back(resumed)
    rerun = ldpbench.run(SPEC, out, workers=1, rerun=True)  # every cell appended again
    assert rerun.cells_run == rerun.cells_total
    _same_as_read_back(rerun)
    assert_frame_equal(rerun.leaderboard, resumed.leaderboard)
    assert rerun.leaderboard.select(pl.col("repeats").min()).item() == 3


@pytest.mark.parametrize("workers", [1, 2])
def test_a_rerun_supersedes_the_stored_rows(tmp_path, workers):
    out = tmp_path / "out"
    spec = {**SPEC, "repeats": 2, "pipelines": ["base"]}
    ldpbench.run(spec, out, workers=1)
    again = ldpbench.run(spec, out, workers=workers, rerun=True)
    assert again.leaderboard["repeats"].to_list() == [2] * again.leaderboard.height
    _same_as_read_back(again)


def test_executor_defaults_are_declared_by_the_executors():
    from ldpbench.runner import default_executor

    plugins = builtin_plugins()
    assert default_executor(plugins, "serial") == "in-process"
    assert default_executor(plugins, "parallel") == "process-pool"


def test_an_executor_whose_constructor_exits_is_a_plugin_failure():
    """Issue 28: plugin code outside a cell is contained: SystemExit(0) in an executor's
    constructor was a silent exit 0 with no results."""
    from ldpbench import build_plugins, hookimpl
    from ldpbench.boundary.contain import PluginCodeFailed
    from ldpbench.runner import choose_executor
    from ldpbench.spec.validate import load_spec_text
    from ldpbench.types import Executor

    class Leaves(Executor):
        name = "leaves"

        def __init__(self, **params):
            raise SystemExit(0)

        def map_unordered(self, fn, tasks):
            return map(fn, tasks)

    class Module:
        @hookimpl
        def ldpbench_register_executors(registry):
            registry.register(Leaves)

    plugins = build_plugins(extra=[Module])
    spec = load_spec_text("name: x\ndatasets: [zipf]\nepsilons: [1]\noracles: [grr]\n", plugins)
    with pytest.raises(PluginCodeFailed, match="executor 'leaves' failed \\(its constructor\\): SystemExit: 0"):
        choose_executor(plugins, spec, "leaves", 1)
