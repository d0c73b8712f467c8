"""Run a spec: the index of a run, one named stage after another.

``ldpbench run`` and :func:`ldpbench.run` call :func:`run_spec`, which reads as the pipeline:

1. **plan** (:func:`plan_run`): expand the spec into cells (:mod:`ldpbench.spec.expand`), compute the
   rows each must produce today (:mod:`ldpbench.engine.fingerprints`), read the results folder
   once (:meth:`~ldpbench.results.store.ResultsStore.read_for_run`) and decide which cells are
   done, which are stale and why (:mod:`ldpbench.results.status`);
2. **manifest** (:func:`ldpbench.results.manifest.run_manifest`): what is run, with what, where;
3. **execute** (:func:`execute`): every cell left through an executor plugin, each running
   :func:`ldpbench.engine.cell.run_cell`, its rows appended to the folder as it finishes;
4. **assemble** (:func:`ldpbench.results.read.this_spec_rows`): the stored and the new rows that
   are this spec's as produced today;
5. **rank** (:func:`ldpbench.leaderboard.aggregate.aggregate`): the leaderboard;
6. **write**: ``leaderboard.json``, and the :class:`RunOutcome`.

A run is resumable by construction: each finished cell's rows are appended in one atomic write,
and a rerun evaluates only the cells whose rows are missing, failed, not finite, or stale. The
runner owns the results folder and writes every file in it. Cells are evaluated with the
:class:`~ldpbench.loading.manager.Plugins` given to :func:`run_spec`: in this process and in workers
forked from it they are that very object; a worker that must rebuild them (a spawned process, a
Dask worker) does so from their :class:`~ldpbench.loading.manager.PluginSource`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.boundary.contain import contained_call
from ldpbench.engine import cell as engine
from ldpbench.engine.cell import CellTask, bundle_tasks, run_bundle, run_cell
from ldpbench.engine.fingerprints import ExpectedRows, expected_rows
from ldpbench.engine.rows import rows_to_frame
from ldpbench.errors import UsageError
from ldpbench.leaderboard.aggregate import aggregate
from ldpbench.leaderboard.notes import noted_rows
from ldpbench.leaderboard.render import render
from ldpbench.loading.identity import spec_identities
from ldpbench.loading.manager import Plugins
from ldpbench.results.manifest import run_manifest
from ldpbench.results.read import this_spec_rows
from ldpbench.results.status import cell_status, incomplete_cells, stale_reasons
from ldpbench.results.store import ResultsStore
from ldpbench.spec.expand import Cell, count_cells, expand
from ldpbench.spec.model import Entry, Spec
from ldpbench.types import TaskLost

Rows = list[dict[str, Any]]


def run_spec(
    spec: Spec,
    plugins: Plugins,
    out_dir: str | Path | None = None,
    *,
    workers: int | None = None,
    executor: str | None = None,
    progress: bool | None = None,
    rerun: bool = False,
    recompute: bool = True,
    cell_timeout: float | None = None,
) -> RunOutcome:
    """Run every unfinished cell of ``spec`` and return the leaderboard of all its cells.

    A stored cell is reused only if its rows carry today's fingerprints
    (:mod:`ldpbench.engine.fingerprints`: plugin identities, parameters, data). Cells stored by
    other code or data are *stale*: they are rerun and :attr:`RunOutcome.stale_reasons` says why,
    or, with ``recompute=False``, the run is refused (:class:`~ldpbench.errors.UsageError`) before
    anything is written. The results folder is locked for the run
    (:meth:`~ldpbench.results.store.ResultsStore.lock`).

    :param cell_timeout: seconds a cell may run before it fails (beats the spec's ``cell_timeout``).
    """
    started = time.perf_counter()
    # Absolute, once: a plugin that calls os.chdir (and forgets to go back) must not move the
    # appends and leaderboard.json that follow under its own working directory.
    store = ResultsStore((Path(out_dir) if out_dir else default_out_dir(spec)).absolute())
    with store.lock():
        plan = plan_run(spec, plugins, store, rerun=rerun, recompute=recompute)
        store.write_manifest(run_manifest(spec, plugins, plan.cells, plan.expected, plan.identities))
        timeout = cell_timeout if cell_timeout is not None else spec.cell_timeout
        runner = choose_executor(plugins, spec, executor, workers)
        fresh = execute(plan, plugins, store, runner, timeout=timeout, progress=progress)
        rows = assemble(plan, fresh)
        board = aggregate(rows, order=[c.cell_id for c in plan.cells], alpha=spec.alpha)
        store.write_leaderboard(render(board, "json"))
    return _outcome(plan, store, rows, board, fresh, time.perf_counter() - started)


@dataclass
class RunOutcome:
    """What a run did and found (returned by :func:`run_spec` and :func:`ldpbench.run`)."""

    spec: Spec
    out_dir: Path
    leaderboard: Any  #: polars.DataFrame from ldpbench.leaderboard.aggregate.aggregate
    cells_total: int
    cells_run: int
    cells_skipped: int
    failed_rows: int
    errors: list[str] = field(default_factory=list)
    #: the plugin warnings of this spec's rows (column ``notes``), one line per (dataset, users,
    #: epsilon, oracle, pipeline) naming it, and how many result rows carry one
    notes: list[str] = field(default_factory=list)
    noted_rows: int = 0
    seconds: float = 0.0
    #: cells whose stored rows came from other code or data, rerun in this run, and why
    cells_stale: int = 0
    stale_reasons: list[str] = field(default_factory=list)
    #: stored cells rerun because they lack rows of pipelines or metrics new to the spec, and why
    cells_incomplete: int = 0
    incomplete_reason: str = ""


def default_out_dir(spec: Spec) -> Path:
    return Path("results") / spec.name


# ----------------------------------------------------------------------------------------------
# The stages
# ----------------------------------------------------------------------------------------------


@dataclass
class RunPlan:
    """Stage 1's answer: the spec's cells, the rows each must produce today, what the folder
    holds, and which cells are left to run."""

    spec: Spec
    cells: list[Cell]
    expected: ExpectedRows
    identities: dict[str, Any]
    stored: pl.DataFrame
    todo: list[Cell]
    stale: set[str] = field(default_factory=set)
    stale_reasons: list[str] = field(default_factory=list)
    #: stored cells rerun because the spec has pipelines or metrics their rows lack
    incomplete: set[str] = field(default_factory=set)
    incomplete_reason: str = ""


def plan_run(spec: Spec, plugins: Plugins, store: ResultsStore, *, rerun: bool, recompute: bool) -> RunPlan:
    """Stage 1: which cells to run. The results folder is read once here, and checked before
    anything is written (a folder of another schema is left exactly as it was)."""
    state = store.read_for_run()
    cells = list(expand(spec))
    expected = expected_rows(spec, cells)
    entries = [*spec.datasets, *spec.mechanisms, *(s for p in spec.pipelines for s in p.steps), *spec.metrics]
    entries += [p.attack for p in spec.poisons if p.attack is not None]  # recorded in the manifest too
    identities = spec_identities(plugins, entries)
    done, stale = (set(), set()) if rerun else cell_status(state.rows, expected)
    reasons: list[str] = []
    if stale:
        stale_cells = [c for c in cells if c.cell_id in stale]
        reasons = stale_reasons(plugins, spec, stale_cells, state.manifest, identities)
        if not recompute:
            raise UsageError(
                f"{len(stale)} stored cells are stale: {'; '.join(reasons)}; "
                "run without --no-recompute to recompute them (results left unchanged)"
            )
    todo = [c for c in cells if c.cell_id not in done]
    incomplete, why = (set(), "") if rerun else incomplete_cells(state.rows, expected, done, stale)
    return RunPlan(spec, cells, expected, identities, state.rows, todo, stale, reasons, incomplete, why)


def execute(
    plan: RunPlan, plugins: Plugins, store: ResultsStore, runner: Any, *, timeout: float | None, progress: bool | None
) -> Rows:
    """Stage 3: every cell left, through the executor; each cell's rows are appended to the folder
    as soon as it finishes (a killed run loses at most the cells in flight). Returns them."""
    from tqdm import tqdm

    spec = plan.spec
    tasks = [CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), timeout, plugins.source) for c in plan.todo]
    bundled = type(runner).tags().bundles
    # The in-process executor evaluates cells with this process's cached populations: after an
    # edit of a data file (a notebook, a second `main()` call) they would compute with the old
    # data under today's fingerprints.
    run_cell.clear_population_cache()
    disable = (not progress) if progress is not None else None
    bar = tqdm(total=len(tasks), desc=spec.name, unit="cell", file=sys.stderr, disable=disable, leave=False)
    fresh: Rows = []
    try:
        with engine.plugins_given(plugins):
            lost: list[CellTask] = []  # the cells of bundles whose worker died or hung
            if bundled:
                for result in runner.map_unordered(run_bundle, bundle_tasks(tasks)):
                    if isinstance(result, TaskLost) and len(result.task.tasks) > 1:
                        lost.extend(result.task.tasks)  # rerun one by one: tell the culprit apart
                        continue
                    cells = (
                        [result.task.failed_rows(result.reason, plugins)] if isinstance(result, TaskLost) else result
                    )
                    _store_cells(cells, store, fresh, bar)
            for result in runner.map_unordered(run_cell, lost if bundled else tasks):
                _store(
                    result.task.failed_rows(result.reason, plugins) if isinstance(result, TaskLost) else result,
                    store,
                    fresh,
                    bar,
                )
    finally:
        bar.close()
        runner.close()
    return fresh


def _store(rows: Rows, store: ResultsStore, fresh: Rows, bar: Any) -> None:
    """One cell's rows appended to the folder (one atomic write) and to this run's."""
    store.append(rows)
    fresh.extend(rows)
    bar.update(1)


def _store_cells(cells: list[Rows], store: ResultsStore, fresh: Rows, bar: Any) -> None:
    """The rows of a bundle's cells, which came back together, appended in one atomic write and
    one ``fsync`` (a kill loses them together or not at all, as it would have lost them in
    flight): the parent's serial cost per stored cell, mostly the ``fsync``, is paid once per
    bundle (docs/scale-out.md, "Cost model per worker")."""
    rows = [row for cell in cells for row in cell]
    store.append(rows)
    fresh.extend(rows)
    bar.update(len(cells))


def assemble(plan: RunPlan, fresh: Rows) -> pl.DataFrame:
    """Stage 4: this spec's rows as produced today: the stored ones, each cell's latest append
    superseding the rows stored before it, and the ones this run appended."""
    appended = list({r["cell_id"]: None for r in fresh})
    stored = plan.stored.filter(~pl.col("cell_id").is_in(appended))
    return this_spec_rows(pl.concat([stored, rows_to_frame(fresh)], how="vertical"), plan.expected)


def _outcome(
    plan: RunPlan, store: ResultsStore, rows: pl.DataFrame, board: pl.DataFrame, fresh: Rows, seconds: float
) -> RunOutcome:
    """Stage 6: what the run did and found."""
    errors = list(dict.fromkeys(r["error"] for r in fresh if r["error"]))
    failed = int(rows["error"].is_not_null().sum())
    if not errors and failed:
        errors = sorted(set(rows["error"].drop_nulls().to_list()))
    noted = rows["notes"].drop_nulls()
    return RunOutcome(
        spec=plan.spec,
        out_dir=store.directory,
        leaderboard=board,
        cells_total=count_cells(plan.spec),
        cells_run=len(plan.todo),
        cells_skipped=len(plan.cells) - len(plan.todo),
        failed_rows=failed,
        errors=errors,
        notes=[f"{row}: {notes}" for row, notes in noted_rows(board)],
        noted_rows=noted.len(),
        seconds=seconds,
        cells_stale=len(plan.stale),
        stale_reasons=plan.stale_reasons,
        cells_incomplete=len(plan.incomplete),
        incomplete_reason=plan.incomplete_reason,
    )


def choose_executor(plugins: Plugins, spec: Spec, executor: str | None, workers: int | None) -> Any:
    """``--executor`` beats the spec's ``executor`` beats the default: the executor whose tags
    declare ``default_for="serial"`` for ``--workers 1``, else ``default_for="parallel"``."""
    if executor:
        entry = Entry("executor", executor)
        plugins.get("executor", executor)
    elif spec.executor is not None:
        entry = spec.executor
    else:
        entry = Entry("executor", default_executor(plugins, "serial" if workers == 1 else "parallel"))
    params = entry.param_dict
    info = plugins.get("executor", entry.name)
    if workers is not None and any(p.name == "workers" for p in info.params):
        params["workers"] = workers
    # Plugin code outside any cell: contained, so that an executor's SystemExit(0) or
    # os._exit(0) is a plugin failure (exit 3, named), not a green run with no results.
    return contained_call(
        f"executor '{entry.name}'",
        "its constructor",
        lambda: plugins.create("executor", entry.name, params),
        seconds=None,  # no cell limit: starting a cluster may take longer than a cell
    )


def default_executor(plugins: Plugins, role: str) -> str:
    """The one executor whose tags declare ``default_for == role`` (``serial`` or ``parallel``)."""
    names = [i.name for i in plugins.registry("executor") if i.cls.tags().default_for == role]
    if len(names) != 1:
        claim = f"several executors claim it ({', '.join(names)})" if names else "no installed executor declares it"
        raise UsageError(f"no default {role} executor: {claim}; name one with --executor or the spec's 'executor'")
    return names[0]
