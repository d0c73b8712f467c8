"""Evaluate cells: population -> mechanism -> pipelines -> metrics.

The pieces a cell is made of are small functions here so that the runner, the notebook API
(:func:`ldpbench.postprocess`) and tests share one code path.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .pluginmanager import Plugins, build_plugins
from .seeding import rng_for
from .simulate import simulate
from .spec.expand import Cell
from .spec.model import Entry, Pipeline
from .types import Estimate, Population, PostProcessor


#: What a plugin may raise and only fail its own rows with. SystemExit too: a plugin calling
#: sys.exit() must not end the run (its exit code 1 would read as "regression"). KeyboardInterrupt
#: still stops the run, which resumes later.
PLUGIN_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit)


def apply_pipeline(
    postprocessors: Sequence[PostProcessor], estimate: Estimate, rng: np.random.Generator
) -> Estimate:
    """Apply a chain of post-processors in order (``[power, norm-sub]`` is PowerNS).

    Each step sees only the previous step's Estimate; the steps' names accumulate in
    ``Estimate.steps``.
    """
    for step in postprocessors:
        out = step.apply(estimate, rng)
        if not isinstance(out, Estimate):
            raise TypeError(f"post-processor '{step.name}' returned {type(out).__name__}, not an Estimate")
        estimate = out.replace(steps=estimate.steps + (step.name,))
    return estimate


# ----------------------------------------------------------------------------------------------
# One cell
# ----------------------------------------------------------------------------------------------



@dataclass(frozen=True)
class CellTask:
    """Everything a worker needs to evaluate one cell (picklable)."""

    cell: Cell
    pipelines: tuple[Pipeline, ...]
    metrics: tuple[Entry, ...]
    plugins_dirs: tuple[str, ...] = ()


@functools.lru_cache(maxsize=8)
def _plugins(plugins_dirs: tuple[str, ...]) -> Plugins:
    # One plugin manager per worker process (and per set of plugin folders).
    return build_plugins(plugins_dirs)


@functools.lru_cache(maxsize=16)
def _population(plugins_dirs: tuple[str, ...], dataset: Entry, seed: int) -> Population:
    plugins = _plugins(plugins_dirs)
    ds = plugins.create("dataset", dataset.name, dataset.param_dict)
    population = ds.load(rng_for(seed, "dataset", dataset.label))
    if not isinstance(population, Population):
        raise TypeError(f"dataset '{dataset.name}' returned {type(population).__name__}, not a Population")
    if population.n <= 0:
        raise ValueError(f"dataset '{dataset.name}' has no users")
    return population


def _error_text(what: str, exc: BaseException) -> str:
    return f"{what}: {type(exc).__name__}: {exc}"


def fingerprint(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def mechanism_outputs(
    plugins: Plugins, cell: Cell, population: Population
) -> dict[str, Any]:
    """Run the cell's oracle or protocol; return ``{label: Estimate}``."""
    mech = cell.mechanism
    ds, budget, rep, seed = cell.dataset, cell.budget, cell.repeat, cell.seed
    # The users of a repeat are drawn with a stream keyed by (dataset, budget or user mix, repeat)
    # and never by the mechanism, so every oracle in a repeat sees the same users (paired
    # comparisons); only the perturbation stream below is per mechanism. `sample: N` and `users:`
    # groups (which draw their own sample) share this key and cannot be combined.
    users_rng = rng_for(seed, "users", ds.label, budget.label, rep)
    users = population
    if ds.sample:
        users = population.sample(ds.sample, users_rng)
    rng = rng_for(seed, "mechanism", ds.label, budget.label, mech.label, rep)
    if mech.kind == "protocol":
        protocol = plugins.create("protocol", mech.name, mech.param_dict)
        outputs = protocol.run(users, budget.epsilon_value, rng, simulation=cell.simulation)
        return {f"{mech.label}:{label}": est for label, est in outputs.items()}
    if budget.groups:
        from .budgets import parse_epsilon
        from .groups import simulate_groups

        groups = [(parse_epsilon(eps, population.d), count) for eps, count in budget.groups]

        def make_oracle(eps: float):
            return plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=eps)

        est = simulate_groups(make_oracle, population, groups, rng, cell.simulation, users_rng=users_rng)
        return {mech.label: est.replace(mechanism=mech.label)}
    oracle = plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=budget.epsilon_value)
    est = simulate(oracle, users.counts, rng, cell.simulation)
    return {mech.label: est.replace(mechanism=mech.label)}


def result_row(
    cell: Cell,
    oracle_label: str,
    pipeline: Pipeline,
    metric: Entry,
    *,
    value: float,
    error: str | None,
    greater: bool,
    notes: str | None = None,
    n: int = 0,
    d: int = 0,
    theory: float = math.nan,
) -> dict[str, Any]:
    """One stored result row: a (cell, pipeline, metric) value, or a failure (NaN and its error).

    The ``fingerprint`` keys the row by what produced it (dataset, budget, mechanism, simulation
    mode, the pipeline's steps and the metric, with their parameters and versions), so a rerun
    recognizes finished rows and ``compare`` refuses rows whose plugin versions changed.
    """
    ds, budget = cell.dataset, cell.budget
    base_fp = [ds.fingerprint_data(), budget.label, cell.mechanism.fingerprint_data(), cell.simulation]
    return {
        "cell_id": cell.cell_id,
        "dataset": ds.label,
        "users": budget.users_label if budget.groups else "",
        "epsilon": budget.epsilon_value,
        "oracle": oracle_label,
        "pipeline": pipeline.label,
        "metric": metric.label,
        "greater_is_better": greater,
        "repeat": cell.repeat,
        "value": float(value),
        "error": error,
        "notes": notes,
        "simulation": cell.simulation,
        "n": int(n),
        "d": int(d),
        "fingerprint": fingerprint(base_fp, [s.fingerprint_data() for s in pipeline.steps], metric.fingerprint_data()),
        "elapsed": 0.0,
        "theory": float(theory),
    }


def failed_cell_rows(task: CellTask, error: str, plugins: Plugins | None, n: int = 0, d: int = 0) -> list[dict[str, Any]]:
    """A failed row for every pipeline and metric of a cell whose dataset or mechanism failed (or
    whose worker process died): the same labels and fingerprints as its successful rows, so the
    leaderboard counts failed repeats of the same rows and a rerun replaces them."""
    return [
        result_row(task.cell, task.cell.mechanism.label, pipeline, metric, value=math.nan, error=error,
                   greater=_greater(plugins, metric), n=n, d=d)
        for pipeline in task.pipelines
        for metric in task.metrics
    ]


def _greater(plugins: Plugins | None, metric: Entry) -> bool:
    # The spec validator already checked the name; without plugins (they failed to load) the
    # direction is unknown and the row is a failure anyway.
    return bool(plugins.get("metric", metric.name).cls.greater_is_better) if plugins else False


def run_cell(task: CellTask) -> list[dict[str, Any]]:
    """Evaluate one cell with every pipeline and metric; return its result rows.

    A plugin that raises fails only what depends on it: a dataset or mechanism failure fails the
    whole cell, a pipeline failure that pipeline's rows, a metric failure that metric's rows. The
    error text is stored in the row's ``error``.
    """
    cell = task.cell
    started = time.perf_counter()
    ds, budget, mech, rep, seed = cell.dataset, cell.budget, cell.mechanism, cell.repeat, cell.seed
    rows: list[dict[str, Any]] = []
    meta = {"n": 0, "d": 0}

    def row(
        oracle_label: str, pipeline: Pipeline, metric: Entry, value: float, error: str | None, greater: bool,
        notes: str | None = None, theory: float = math.nan,
    ) -> None:
        rows.append(result_row(cell, oracle_label, pipeline, metric, value=value, error=error, greater=greater,
                               notes=notes, n=meta["n"], d=meta["d"], theory=theory))

    plugins: Plugins | None = None
    try:
        plugins = _plugins(task.plugins_dirs)
        population = _population(task.plugins_dirs, ds, seed)
        meta["d"] = population.d
        meta["n"] = ds.sample or population.n
        outputs = mechanism_outputs(plugins, cell, population)
    except PLUGIN_ERRORS as exc:  # a failing plugin fails its own cell only
        stage = "dataset" if meta["d"] == 0 else mech.kind
        name = ds.name if stage == "dataset" else mech.name
        rows = failed_cell_rows(task, _error_text(f"{stage} '{name}'", exc), plugins, meta["n"], meta["d"])
        _stamp(rows, started)
        return rows

    metrics = []
    for metric in task.metrics:
        try:
            metrics.append((metric, plugins.create("metric", metric.name, metric.param_dict), None))
        except PLUGIN_ERRORS as exc:
            metrics.append((metric, None, _error_text(f"metric '{metric.name}'", exc)))

    for label, estimate in outputs.items():
        meta["n"] = estimate.n
        variance = _theory_variance(plugins, cell, population, estimate)
        digest = estimate.frequencies_digest() if variance is not None else None
        for pipeline in task.pipelines:
            try:
                steps = [plugins.create("postprocessor", s.name, s.param_dict) for s in pipeline.steps]
                prng = rng_for(seed, "pipeline", ds.label, budget.label, label, rep, pipeline.label)
                processed = apply_pipeline(steps, estimate, prng)
                perr, notes = None, collect_warnings(processed.info)
            except PLUGIN_ERRORS as exc:
                processed, perr, notes = None, _error_text(f"pipeline '{pipeline.label}'", exc), None
            for metric, scorer, merr in metrics:
                g = _greater(plugins, metric)
                if perr or merr:
                    row(label, pipeline, metric, math.nan, perr or merr, g)
                    continue
                # The same metric stream for every mechanism and pipeline of a repeat: e.g.
                # set-query draws the same random subsets for all methods (paired comparisons).
                mrng = rng_for(seed, "metric", ds.label, budget.label, rep, metric.label)
                try:
                    value = float(scorer.score(population, processed, mrng))
                    theory = math.nan
                    if digest is not None and processed.frequencies_digest() == digest:
                        theory = _theory(scorer, population, processed, variance)
                    row(label, pipeline, metric, value, None, g, notes, theory)
                except PLUGIN_ERRORS as exc:
                    row(label, pipeline, metric, math.nan, _error_text(f"metric '{metric.name}'", exc), g)
    _stamp(rows, started)
    return rows


def _theory_variance(plugins: Plugins, cell: Cell, population: Population, estimate: Estimate) -> Any:
    """The unprocessed oracle estimate's per-item variance (:mod:`ldpbench.theory`), or None.

    Theory is a diagnostic: an oracle whose variance formula raises loses its ``theory``, never
    its rows."""
    from .theory import expected_item_variance

    mech = cell.mechanism
    if mech.kind != "oracle":
        return None
    try:
        return expected_item_variance(
            lambda eps: plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=eps),
            estimate, population.frequencies, population.n,
        )
    except PLUGIN_ERRORS:
        return None


def _theory(scorer: Any, population: Population, processed: Estimate, variance: Any) -> float:
    try:
        return float(scorer.theory(population, processed, variance))
    except PLUGIN_ERRORS:
        return math.nan


def collect_warnings(info: Mapping[str, Any]) -> str | None:
    """The warnings plugins left in ``Estimate.info``, "; "-joined (None when there are none).

    A plugin reports a result that is usable but not what was asked for (EM stopped at its
    iteration cap, a prior fit clamped) as a list under ``"warnings"``, at the top of ``info`` or
    in its own entry (``info["power"]["warnings"]``); the result rows keep them as ``notes``.
    """
    found: list[str] = []
    for key, value in info.items():
        if key == "warnings" and isinstance(value, (list, tuple)):
            found.extend(str(w) for w in value)
        elif isinstance(value, Mapping) and isinstance(value.get("warnings"), (list, tuple)):
            found.extend(f"{key}: {w}" for w in value["warnings"])
    return "; ".join(dict.fromkeys(found)) or None


def _stamp(rows: list[dict[str, Any]], started: float) -> None:
    elapsed = time.perf_counter() - started
    for r in rows:
        r["elapsed"] = elapsed
