"""The runner (ldpbench/runner.py).

It reads ``results.jsonl`` once: its leaderboard, built from the stored rows and the rows it
appended, is the one the folder gives when read back (fresh, resumed, rerun, and with rows of an
older version of the spec in the folder). Its default executors are declared by the executors.
"""

from __future__ import annotations

import polars as pl
import pytest
import yaml
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


# -- bundles of cells that share a metric stream (ldpbench.engine.cell.CellBundle) ---------------


def _bundle_plugins():
    """The built-in plugins and two GRR variants: ``boom`` raises in its estimate, ``dies`` ends
    its process there (a SIGKILL, as the OOM killer would)."""
    import os
    import signal

    from ldpbench import build_plugins, hookimpl
    from ldpbench_plugins.oracles.grr import GRR

    class Boom(GRR):
        name = "boom"

        def estimate(self, support_counts, n):
            raise ValueError("boom in the estimate")

    class Dies(GRR):
        name = "dies"

        def estimate(self, support_counts, n):
            os.kill(os.getpid(), signal.SIGKILL)  # what the containment cannot catch

    class Module:
        @staticmethod
        @hookimpl
        def ldpbench_register_oracles(registry):
            registry.register(Boom)
            registry.register(Dies)

    return build_plugins(extra=[Module])


BUNDLE_SPEC = {**SPEC, "repeats": 1, "epsilons": [1], "pipelines": ["base"], "metrics": ["mse", "set-query"]}


def test_a_bundle_with_a_failing_cell_yields_the_others_rows_and_its_error():
    import ldpbench.engine.cell as engine
    from ldpbench.engine.cell import CellTask, bundle_tasks, run_bundle
    from ldpbench.spec.expand import expand
    from ldpbench.spec.validate import load_spec_text

    plugins = _bundle_plugins()
    spec = load_spec_text(yaml.safe_dump({**BUNDLE_SPEC, "repeats": 2, "oracles": ["grr", "boom", "oue"]}), plugins)
    tasks = [CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source) for c in expand(spec)]
    bundles = bundle_tasks(tasks)
    # one bundle per repeat, its cells in the grid's order (one per oracle)
    assert [[t.cell.mechanism.name for t in b.tasks] for b in bundles] == [["grr", "boom", "oue"]] * 2
    assert [{t.cell.repeat for t in b.tasks} for b in bundles] == [{0}, {1}]
    with engine.plugins_given(plugins):
        cells = run_bundle(bundles[0])
        alone = [engine.run_cell(t) for t in bundles[0].tasks]
    assert [[r["oracle"] for r in rows] for rows in cells] == [["grr"] * 2, ["boom"] * 2, ["oue"] * 2]
    assert all(r["error"] is None for r in cells[0] + cells[2])
    assert all("boom in the estimate" in r["error"] for r in cells[1])
    # the same numbers as the cells run one by one
    assert [[r["value"] for r in rows] for rows in cells][::2] == [[r["value"] for r in rows] for rows in alone][::2]


def test_a_bundle_whose_worker_dies_is_rerun_cell_by_cell(tmp_path):
    """``dies`` kills its pool worker: its bundle is lost, rerun one cell per process; only that
    cell fails (exit code named), its bystanders' rows are those of an in-process run."""
    plugins = _bundle_plugins()
    spec = {**BUNDLE_SPEC, "oracles": ["grr", "dies", "oue"]}
    pool = ldpbench.run(spec, tmp_path / "pool", workers=2, executor="process-pool", plugins=plugins)
    alone = ldpbench.run({**spec, "oracles": ["grr", "oue"]}, tmp_path / "one", workers=1, plugins=plugins)
    assert pool.cells_run == 3 and pool.failed_rows == 2
    assert pool.errors == ["worker process died (killed by signal 9 (SIGKILL))"]
    cols = ["oracle", "metric", "mean"]
    ok = pool.leaderboard.filter(pl.col("oracle") != "dies").sort("oracle", "metric").select(cols)
    assert_frame_equal(ok, alone.leaderboard.sort("oracle", "metric").select(cols))


def test_a_bundles_cells_are_stored_in_one_append(tmp_path):
    """On the process pool the cells of a (dataset, budget, repeat) come back together and are
    stored in one atomic write and one fsync: one append id per bundle, every cell's rows whole,
    and the same rows as the in-process run, which stores cell by cell."""
    import json

    pooled = ldpbench.run(SPEC, tmp_path / "pool", workers=2)
    alone = ldpbench.run(SPEC, tmp_path / "alone", workers=1)
    lines = (tmp_path / "pool" / "results.jsonl").read_text().splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    by_append: dict[str, set[tuple]] = {}
    for r in rows:
        by_append.setdefault(r["append_id"], set()).add((r["dataset"], r["epsilon"], r["repeat"]))
    # 1 dataset x 2 budgets x 3 repeats = 6 bundles of 2 oracles x 2 pipelines x 2 metrics rows
    assert len(by_append) == 6 and all(len(groups) == 1 for groups in by_append.values())
    assert len(rows) == 6 * 8
    alone_lines = (tmp_path / "alone" / "results.jsonl").read_text().splitlines()[1:]
    assert len({json.loads(line)["append_id"] for line in alone_lines}) == 12  # one per cell
    assert_frame_equal(pooled.leaderboard, alone.leaderboard)
