"""Run a spec: expand the grid, skip finished cells, execute the rest, store, rank.

A run is resumable by construction: each finished cell's rows are appended to the results store
in one atomic write, and a rerun evaluates only the cells whose rows are missing, failed, not
finite, or stale (stored by another version of a plugin, other parameters or other data).

The runner owns the results folder and writes every file in it (``results.jsonl``,
``manifest.json``, ``leaderboard.json``), for ``ldpbench run`` and :func:`ldpbench.run` alike.
Cells are evaluated with the :class:`~ldpbench.loading.manager.Plugins` given to :func:`run_spec`:
in this process and in workers forked from it they are that very object; a worker that must
rebuild them (a spawned process, a Dask worker) does so from their
:class:`~ldpbench.loading.manager.PluginSource`.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import ldpbench.engine.cell as engine
from ldpbench.engine.cell import CODE_KEY, CellTask, failed_cell_rows, row_code_fingerprint, row_fingerprint, run_cell
from ldpbench.errors import LdpbenchError, UsageError
from ldpbench.loading.identity import CORE_KEY, entry_plugins, identity_changes, plugin_key, spec_identities
from ldpbench.loading.manager import Plugins
from ldpbench.results.store import ResultsStore, cell_status, rows_to_frame
from ldpbench.spec.expand import Cell, count_cells, expand
from ldpbench.spec.model import Entry, Spec
from ldpbench.types import TaskLost
from ldpbench.util.provenance import portable_argv
from ldpbench.util.safeio import MAX_LEADERBOARD_BYTES, read_text_bounded
from ldpbench.util.version import VERSION


@dataclass
class RunOutcome:
    spec: Spec
    out_dir: Path
    leaderboard: Any  #: polars.DataFrame from ldpbench.leaderboard.aggregate.aggregate
    cells_total: int
    cells_run: int
    cells_skipped: int
    failed_rows: int
    errors: list[str] = field(default_factory=list)
    #: distinct plugin warnings of this spec's rows (column ``notes``) and how many rows carry one
    notes: list[str] = field(default_factory=list)
    noted_rows: int = 0
    seconds: float = 0.0
    #: cells whose stored rows came from other code or data, rerun in this run, and why
    cells_stale: int = 0
    stale_reasons: list[str] = field(default_factory=list)


def default_out_dir(spec: Spec) -> Path:
    return Path("results") / spec.name


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
    return plugins.create("executor", entry.name, params)


def default_executor(plugins: Plugins, role: str) -> str:
    """The one executor whose tags declare ``default_for == role`` (``serial`` or ``parallel``)."""
    names = [i.name for i in plugins.registry("executor") if i.cls.tags().default_for == role]
    if len(names) != 1:
        claim = f"several executors claim it ({', '.join(names)})" if names else "no installed executor declares it"
        raise UsageError(f"no default {role} executor: {claim}; name one with --executor or the spec's 'executor'")
    return names[0]


def privacy_accounting(plugins: Plugins, spec: Spec) -> list[dict[str, Any]]:
    """The guarantee each group of users received, per mechanism and budget (for the manifest)."""
    out = []
    for mech in spec.mechanisms:
        for budget in spec.budgets:
            if mech.kind == "protocol":
                protocol = plugins.create("protocol", mech.name, mech.param_dict)
                for e in protocol.privacy_accounting(budget.epsilon_value):
                    out.append({"mechanism": mech.label, "budget": budget.label, **e})
            elif budget.groups:
                for eps, count in budget.groups:
                    out.append(
                        {
                            "mechanism": mech.label,
                            "budget": budget.label,
                            "group": f"{count} users",
                            "model": "local",
                            "epsilon": str(eps),
                            "delta": 0.0,
                        }
                    )
            else:
                out.append(
                    {
                        "mechanism": mech.label,
                        "budget": budget.label,
                        "group": "all users",
                        "model": "local",
                        "epsilon": budget.epsilon_value,
                        "delta": 0.0,
                    }
                )
    for e in out:  # JSON has no inf
        if isinstance(e.get("epsilon"), float) and math.isinf(e["epsilon"]):
            e["epsilon"] = "inf"
    return out


def git_commit(path: Path) -> str | None:
    """The commit checked out at ``path``, or None outside a repository and before its first
    commit (where ``git rev-parse HEAD`` fails but still prints the word ``HEAD``)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=path,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def machine_info() -> dict[str, Any]:
    """The manifest's ``machine``: where the numbers were computed, down to what decides their
    last bits (numpy's SIMD kernels, the BLAS, scipy's and polars's versions; see
    :mod:`ldpbench.results.machine`). Two runs are bit-identical only if these agree."""
    from ldpbench.results import machine

    return {
        "node": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "numpy_simd": machine.numpy_simd(),
        "blas": machine.blas(),
        **machine.library_versions(),
        "numeric_env": machine.numeric_environment(),
    }


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
    (:func:`ldpbench.engine.cell.row_fingerprint`: plugin identities, parameters, data). Cells stored
    by other code or data are *stale*: they are rerun and :attr:`RunOutcome.stale_reasons` says
    why, or, with ``recompute=False``, the run is refused (:class:`~ldpbench.errors.UsageError`)
    before anything is written. The results folder is locked for the run
    (:meth:`~ldpbench.results.store.ResultsStore.lock`).

    :param cell_timeout: seconds a cell may run before it fails (beats the spec's ``cell_timeout``).
    """

    out = Path(out_dir) if out_dir else default_out_dir(spec)
    store = ResultsStore(out)
    with store.lock():
        return _run_locked(
            spec,
            plugins,
            store,
            workers=workers,
            executor=executor,
            progress=progress,
            rerun=rerun,
            recompute=recompute,
            cell_timeout=cell_timeout,
        )


def expected_rows(spec: Spec, cells: Sequence[Cell]) -> dict[str, dict[tuple[str, str], tuple[str, str]]]:
    """``cell_id -> {(pipeline, metric): (fingerprint, code fingerprint)}`` of the rows the cells
    produce today."""
    pairs = [(p, m) for p in spec.pipelines for m in spec.metrics]
    # Fingerprints do not depend on the repeat (nor the seed): hash each (dataset, budget,
    # mechanism) once, not once per repeat (a 20-repeat grid would hash everything 20 times).
    by_group: dict[tuple[int, int, int, str], dict[tuple[str, str], tuple[str, str]]] = {}
    out = {}
    for c in cells:
        group = (id(c.dataset), id(c.budget), id(c.mechanism), c.simulation)
        if group not in by_group:
            by_group[group] = {
                (p.label, m.label): (fp := row_fingerprint(c, p, m), row_code_fingerprint(c, p, m, fp))
                for p, m in pairs
            }
        out[c.cell_id] = by_group[group]
    return out


def stale_reasons(
    plugins: Plugins, spec: Spec, stale: Sequence[Cell], old_manifest: Mapping[str, Any], now: Mapping[str, Any]
) -> list[str]:
    """Why stale cells changed: the plugins they use whose identity differs from the manifest of
    the run that stored them; else their spec entries, parameters or data files."""
    old = old_manifest.get("identities")
    changes = identity_changes(old, now) if isinstance(old, Mapping) else {}
    shared = [*(s for p in spec.pipelines for s in p.steps), *spec.metrics]
    involved: dict[str, None] = {CORE_KEY: None}  # the core is behind every cell
    for entry in [*dict.fromkeys(c.dataset for c in stale), *dict.fromkeys(c.mechanism for c in stale), *shared]:
        for info in entry_plugins(plugins, entry):
            involved[plugin_key(info)] = None
    reasons = [changes[k] for k in involved if k in changes]
    if not reasons and not isinstance(old, Mapping):
        return ["stored by an ldpbench that did not record plugin identities"]
    return reasons or ["a plugin, its parameters or a data file changed since they were stored"]


def _old_manifest(store: Any) -> dict[str, Any]:
    # Only for the reasons of stale cells: a missing or unreadable manifest just gives a vaguer one.
    try:
        record = json.loads(read_text_bounded(store.manifest_path, limit=MAX_LEADERBOARD_BYTES, what="manifest"))
    except (LdpbenchError, ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}


def _frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows as :meth:`~ldpbench.results.store.ResultsStore.load` returns them once stored (the schema's
    columns and the code fingerprint)."""
    codes = pl.Series(CODE_KEY, [r.get(CODE_KEY) for r in rows], dtype=pl.String)
    return rows_to_frame(rows).with_columns(codes)


def _run_locked(
    spec: Spec,
    plugins: Plugins,
    store: Any,
    *,
    workers: int | None,
    executor: str | None,
    progress: bool | None,
    rerun: bool,
    recompute: bool,
    cell_timeout: float | None,
) -> RunOutcome:
    from tqdm import tqdm

    from ldpbench.leaderboard.aggregate import aggregate
    from ldpbench.leaderboard.render import render

    started = time.perf_counter()
    out = store.directory
    # Before the manifest is written: a folder of another schema must be left exactly as it was.
    store.check_writable()
    cells = list(expand(spec))
    expected = expected_rows(spec, cells)
    identities = spec_identities(
        plugins, [*spec.datasets, *spec.mechanisms, *(s for p in spec.pipelines for s in p.steps), *spec.metrics]
    )
    # The results file is read once: for the cells done, and below for the leaderboard.
    stored = store.load(extra=(CODE_KEY,))
    done, stale = (set(), set()) if rerun else cell_status(stored, expected, CODE_KEY)
    reasons: list[str] = []
    if stale:
        reasons = stale_reasons(
            plugins, spec, [c for c in cells if c.cell_id in stale], _old_manifest(store), identities
        )
        if not recompute:
            raise UsageError(
                f"{len(stale)} stored cells are stale: {'; '.join(reasons)}; "
                "run without --no-recompute to recompute them (results left unchanged)"
            )
    store.write_manifest(
        {
            "cell_order": [c.cell_id for c in cells],
            "ldpbench_version": VERSION,
            "spec": spec.resolved,
            "seed": spec.seed,
            "plugins": plugins.manifest(),
            "identities": identities,
            "privacy": privacy_accounting(plugins, spec),
            "commit": git_commit(Path(spec.path).resolve().parent),
            "machine": machine_info(),
            "argv": portable_argv(sys.argv),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    )
    todo = [c for c in cells if c.cell_id not in done]
    timeout = cell_timeout if cell_timeout is not None else spec.cell_timeout
    # The in-process executor evaluates cells with this process's cached populations: after an
    # edit of a data file (a notebook, a second `main()` call) they would compute with the old
    # data under today's fingerprints.
    engine.run_cell.clear_population_cache()
    tasks = [CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), timeout, plugins.source) for c in todo]
    runner = choose_executor(plugins, spec, executor, workers)
    errors: list[str] = []
    fresh: list[dict[str, Any]] = []  # the rows appended by this run
    appended: set[str] = set()  # their cells: a cell's latest append supersedes its stored rows
    bar = tqdm(
        total=len(tasks),
        desc=spec.name,
        unit="cell",
        file=sys.stderr,
        disable=(not progress) if progress is not None else None,
        leave=False,
    )
    try:
        with engine.plugins_given(plugins):
            for result in runner.map_unordered(run_cell, tasks):
                rows = failed_cell_rows(result.task, result.reason, plugins) if isinstance(result, TaskLost) else result
                store.append(rows)
                fresh.extend(rows)
                appended.update(r["cell_id"] for r in rows)
                for r in rows:
                    if r["error"] and r["error"] not in errors:
                        errors.append(r["error"])
                bar.update(1)
    finally:
        bar.close()
        runner.close()
    df = pl.concat([stored.filter(~pl.col("cell_id").is_in(list(appended))), _frame(fresh)], how="vertical")
    # Only this spec's rows as they are produced today: a results folder may hold rows of an
    # earlier version of the spec (another seed, a pipeline since removed) or of its plugins,
    # and one leaderboard must never mix numbers of two versions of a plugin.
    keys = ["cell_id", "pipeline", "metric", "fingerprint", CODE_KEY]
    today = pl.DataFrame(
        [(cell, p, m, fp, code) for cell, rows in expected.items() for (p, m), (fp, code) in rows.items()],
        schema=dict.fromkeys(keys, pl.String),
        orient="row",
    )
    df = df.join(today, on=keys, how="semi", maintain_order="left").drop(CODE_KEY)
    failed = int(df["error"].is_not_null().sum())
    if not errors and failed:
        errors = sorted(set(df["error"].drop_nulls().to_list()))
    board = aggregate(df, order=[c.cell_id for c in cells], alpha=spec.alpha)
    store.write_leaderboard(render(board, "json"))
    noted = df["notes"].drop_nulls()
    return RunOutcome(
        spec=spec,
        out_dir=out,
        leaderboard=board,
        cells_total=count_cells(spec),
        cells_run=len(tasks),
        cells_skipped=len(cells) - len(tasks),
        failed_rows=failed,
        errors=errors,
        notes=sorted(set(noted.to_list())),
        noted_rows=noted.len(),
        seconds=time.perf_counter() - started,
        cells_stale=len(stale),
        stale_reasons=reasons,
    )
