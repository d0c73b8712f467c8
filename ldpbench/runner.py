"""Run a spec: expand the grid, skip finished cells, execute the rest, store, rank.

A run is resumable by construction: each finished cell's rows are appended to the results store
in one atomic write, and a rerun evaluates only the cells whose rows are missing or failed.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .engine import CellTask, failed_cell_rows, run_cell
from .types import TaskLost
from .pluginmanager import Plugins
from .spec.expand import count_cells, expand
from .spec.model import Entry, Spec


@dataclass
class RunOutcome:
    spec: Spec
    out_dir: Path
    leaderboard: Any  #: polars.DataFrame from ldpbench.leaderboard.aggregate
    cells_total: int
    cells_run: int
    cells_skipped: int
    failed_rows: int
    errors: list[str] = field(default_factory=list)
    #: distinct plugin warnings of this spec's rows (column ``notes``) and how many rows carry one
    notes: list[str] = field(default_factory=list)
    noted_rows: int = 0
    seconds: float = 0.0


def default_out_dir(spec: Spec) -> Path:
    return Path("results") / spec.name


def choose_executor(plugins: Plugins, spec: Spec, executor: str | None, workers: int | None) -> Any:
    """``--executor`` beats the spec's ``executor`` beats the default (process pool; in-process
    for ``--workers 1``)."""
    if executor:
        entry = Entry("executor", executor)
        plugins.get("executor", executor)
    elif spec.executor is not None:
        entry = spec.executor
    else:
        entry = Entry("executor", "in-process" if workers == 1 else "process-pool")
    params = entry.param_dict
    info = plugins.get("executor", entry.name)
    if workers is not None and any(p.name == "workers" for p in info.params):
        params["workers"] = workers
    return plugins.create("executor", entry.name, params)


def privacy_accounting(plugins: Plugins, spec: Spec) -> list[dict[str, Any]]:
    """The guarantee each group of users received, per mechanism and budget (for the manifest)."""
    out = []
    for mech in spec.mechanisms:
        for budget in spec.budgets:
            if mech.kind == "protocol":
                protocol = plugins.create("protocol", mech.name, mech.param_dict)
                account = getattr(protocol, "privacy_accounting", None)
                entries = account(budget.epsilon_value) if account else [
                    {"group": "all users", "model": "unknown", "epsilon": budget.epsilon_value}
                ]
                for e in entries:
                    out.append({"mechanism": mech.label, "budget": budget.label, **e})
            elif budget.groups:
                for eps, count in budget.groups:
                    out.append({"mechanism": mech.label, "budget": budget.label, "group": f"{count} users",
                                "model": "local", "epsilon": str(eps), "delta": 0.0})
            else:
                out.append({"mechanism": mech.label, "budget": budget.label, "group": "all users",
                            "model": "local", "epsilon": budget.epsilon_value, "delta": 0.0})
    for e in out:  # JSON has no inf
        if isinstance(e.get("epsilon"), float) and math.isinf(e["epsilon"]):
            e["epsilon"] = "inf"
    return out


def git_commit(path: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def machine_info() -> dict[str, Any]:
    return {
        "node": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
    }


def run_spec(
    spec: Spec,
    plugins: Plugins,
    out_dir: str | Path | None = None,
    *,
    workers: int | None = None,
    executor: str | None = None,
    plugins_dirs: Sequence[str] = (),
    progress: bool | None = None,
    rerun: bool = False,
) -> RunOutcome:
    """Run every unfinished cell of ``spec`` and return the leaderboard of all its cells."""
    from tqdm import tqdm

    from .leaderboard import aggregate
    from .store import ResultsStore

    started = time.perf_counter()
    out = Path(out_dir) if out_dir else default_out_dir(spec)
    store = ResultsStore(out)
    # Before the manifest is written: a folder of another schema must be left exactly as it was.
    store.check_writable()
    cells = list(expand(spec))
    store.write_manifest(
        {
            "cell_order": [c.cell_id for c in cells],
            "ldpbench_version": __version__,
            "spec": spec.resolved,
            "seed": spec.seed,
            "plugins": plugins.manifest(),
            "privacy": privacy_accounting(plugins, spec),
            "commit": git_commit(Path(spec.path).resolve().parent),
            "machine": machine_info(),
            "argv": sys.argv,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    )
    expected = {(p.label, m.label) for p in spec.pipelines for m in spec.metrics}
    done = set() if rerun else set(store.done_cells(expected))
    todo = [c for c in cells if c.cell_id not in done]
    tasks = [
        CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), tuple(plugins_dirs)) for c in todo
    ]
    runner = choose_executor(plugins, spec, executor, workers)
    errors: list[str] = []
    bar = tqdm(
        total=len(tasks),
        desc=spec.name,
        unit="cell",
        file=sys.stderr,
        disable=(not progress) if progress is not None else None,
        leave=False,
    )
    try:
        for result in runner.map_unordered(run_cell, tasks):
            rows = failed_cell_rows(result.task, result.reason, plugins) if isinstance(result, TaskLost) else result
            store.append(rows)
            for r in rows:
                if r["error"] and r["error"] not in errors:
                    errors.append(r["error"])
            bar.update(1)
    finally:
        bar.close()
        runner.close()
    ids = {c.cell_id for c in cells}
    df = store.load()
    # Only this spec's cells, pipelines and metrics: a results folder may hold rows of an earlier
    # version of the spec (another seed, a pipeline since removed).
    df = df.filter(
        df["cell_id"].is_in(list(ids))
        & df["pipeline"].is_in([p.label for p in spec.pipelines])
        & df["metric"].is_in([m.label for m in spec.metrics])
    )
    failed = int(df["error"].is_not_null().sum())
    if not errors and failed:
        errors = sorted(set(df["error"].drop_nulls().to_list()))
    board = aggregate(df, order=[c.cell_id for c in cells], alpha=spec.alpha)
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
    )
