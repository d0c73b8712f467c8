"""Evaluate cells: population -> mechanism -> pipelines -> metrics.

The pieces a cell is made of are small functions here so that the runner, the notebook API
(:func:`ldpbench.postprocess`) and tests share one code path.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.boundary.failures import error_text, plugin_location
from ldpbench.boundary.guard import CellTimeout, cell_guard, is_real_interrupt
from ldpbench.boundary.values import (
    PluginOutputError,
    checked_estimate,
    checked_metric_value,
    checked_population,
    frozen_estimate,
    frozen_population,
)
from ldpbench.engine.simulate import simulate
from ldpbench.engine.threads import one_native_thread
from ldpbench.loading.identity import core_identity
from ldpbench.loading.manager import Plugins, PluginSource
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Entry, Pipeline
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Estimate, Population, PostProcessor


def apply_pipeline(
    postprocessors: Sequence[PostProcessor], estimate: Estimate, rng: np.random.Generator, d: int | None = None
) -> Estimate:
    """Apply a chain of post-processors in order (``[power, norm-sub]`` is PowerNS).

    Each step sees only the previous step's Estimate, read-only; what it returns must be an
    Estimate with finite frequencies of the right shape (``d`` items, or ``len(items)``), else
    :class:`~ldpbench.boundary.values.PluginOutputError`. The steps' names accumulate in ``Estimate.steps``.
    """
    for step in postprocessors:
        out = step.apply(frozen_estimate(estimate), rng)
        estimate = checked_estimate(f"post-processor '{step.name}'", out, d)
        estimate = estimate.replace(steps=estimate.steps + (step.name,))
    return estimate


# ----------------------------------------------------------------------------------------------
# One cell
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellTask:
    """Everything a worker needs to evaluate one cell (picklable).

    :param timeout: the cell's time limit in seconds (``--cell-timeout`` / ``cell_timeout:``),
        None for none; executors that can kill a worker read it too.
    :param plugins: the run's plugins (:attr:`Plugins.source <ldpbench.loading.manager.Plugins.source>`):
        the process that has them (given with :func:`plugins_given`) uses them, a worker process
        rebuilds them.
    """

    cell: Cell
    pipelines: tuple[Pipeline, ...]
    metrics: tuple[Entry, ...]
    timeout: float | None = None
    plugins: PluginSource = PluginSource()


#: The plugins given to a run in this process, by their source (worker processes forked during the
#: run inherit them).
_GIVEN: dict[PluginSource, Plugins] = {}


@contextlib.contextmanager
def plugins_given(plugins: Plugins) -> Iterator[None]:
    """While the block runs, cells whose task names ``plugins.source`` use ``plugins`` themselves,
    in this process and in worker processes forked from it."""
    _GIVEN[plugins.source] = plugins
    try:
        yield
    finally:
        _GIVEN.pop(plugins.source, None)


def _plugins(source: PluginSource) -> Plugins:
    given = _GIVEN.get(source)
    return given if given is not None else _rebuilt(source)


@functools.lru_cache(maxsize=8)
def _rebuilt(source: PluginSource) -> Plugins:
    # One plugin manager per worker process and run (the source's token is unique per build).
    return source.rebuild()


def fingerprint(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def mechanism_outputs(plugins: Plugins, cell: Cell, population: Population) -> dict[str, Any]:
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
        users = frozen_population(population.sample(ds.sample, users_rng))
    rng = rng_for(seed, "mechanism", ds.label, budget.label, mech.label, rep)
    if mech.kind == "protocol":
        protocol = plugins.create("protocol", mech.name, mech.param_dict)
        outputs = protocol.run(users, budget.epsilon_value, rng, simulation=cell.simulation)
        if not isinstance(outputs, Mapping):
            raise PluginOutputError(f"protocol '{mech.name}' returned {type(outputs).__name__}, not a mapping")
        return {
            f"{mech.label}:{label}": checked_estimate(f"protocol '{mech.name}' (output '{label}')", est, population.d)
            for label, est in outputs.items()
        }
    if budget.groups:
        from ldpbench.engine.groups import simulate_groups
        from ldpbench.spec.budgets import parse_epsilon

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
    info: str | None = None,
    theory: float = math.nan,
) -> dict[str, Any]:
    """One stored result row: a (cell, pipeline, metric) value, or a failure (NaN and its error).

    The ``fingerprint`` (:func:`row_fingerprint`) keys the row by what produced it, so a rerun
    reuses only rows whose code and data are unchanged and ``compare`` refuses to compare rows
    that measure different things.
    """
    ds, budget = cell.dataset, cell.budget
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
        "info": info,
        "simulation": cell.simulation,
        "n": int(n),
        "d": int(d),
        "fingerprint": (measured := row_fingerprint(cell, pipeline, metric)),
        "elapsed": 0.0,
        # Not a schema column (the store keeps extra keys): what resume matches.
        CODE_KEY: row_code_fingerprint(cell, pipeline, metric, measured),
        "theory": float(theory),
    }


def row_fingerprint(cell: Cell, pipeline: Pipeline, metric: Entry) -> str:
    """Hash of what a row's numbers measure: the dataset (parameters, content of its files), the
    budget, the mechanism, the simulation mode, every step of the pipeline and the metric, each
    with its parameters and algorithm version (and those of the prior families a parameter
    names). ``compare`` matches it: rows that differ here measure different things.

    Neither ldpbench's version nor a plugin distribution's: a release that leaves the algorithms
    alone must leave a CI baseline comparable, so that a 2x regression in it shows as ``worse``.
    The seed and repeat are in the ``cell_id``.
    """
    base = [cell.dataset.fingerprint_data(), cell.budget.label, cell.mechanism.fingerprint_data(), cell.simulation]
    return fingerprint(base, [s.fingerprint_data() for s in pipeline.steps], metric.fingerprint_data())


#: The result-row key holding :func:`row_code_fingerprint`.
CODE_KEY = "code_fingerprint"


def row_code_fingerprint(cell: Cell, pipeline: Pipeline, metric: Entry, measured: str | None = None) -> str:
    """Hash of the code behind a row: each plugin's whole identity (:mod:`ldpbench.loading.identity`:
    distribution version, algorithm version, source hash), ldpbench's core
    (:func:`~ldpbench.loading.identity.core_identity`) and the row's :func:`row_fingerprint`.
    A stored row is reused by a rerun only if this is unchanged: an edited plugin, built-in or
    ``--plugins-dir`` file, never serves its old numbers. ``measured``: the row's
    :func:`row_fingerprint`, when the caller has it."""
    entries = [cell.dataset, cell.mechanism, *pipeline.steps, metric]
    measured = measured or row_fingerprint(cell, pipeline, metric)
    return fingerprint(measured, [e.code_data() for e in entries], core_identity().token())


def failed_cell_rows(
    task: CellTask, error: str, plugins: Plugins | None, n: int = 0, d: int = 0, where: str | None = None
) -> list[dict[str, Any]]:
    """A failed row for every pipeline and metric of a cell whose dataset or mechanism failed (or
    whose worker process died): the same labels and fingerprints as its successful rows, so the
    leaderboard counts failed repeats of the same rows and a rerun replaces them."""
    rows = [
        result_row(
            task.cell,
            task.cell.mechanism.label,
            pipeline,
            metric,
            value=math.nan,
            error=error,
            greater=_greater(plugins, metric),
            n=n,
            d=d,
        )
        for pipeline in task.pipelines
        for metric in task.metrics
    ]
    for r in rows:
        r["where"] = where
    return rows


def _greater(plugins: Plugins | None, metric: Entry) -> bool:
    # The spec validator already checked the name; without plugins (they failed to load) the
    # direction is unknown and the row is a failure anyway.
    return bool(plugins.get("metric", metric.name).cls.greater_is_better) if plugins else False


def _contained(exc: BaseException) -> bool:
    """Whether a plugin's exception fails only what depends on it (everything a plugin can raise:
    ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, any ``BaseException``), or ends the
    cell (its time limit) or the run (the user's real Ctrl-C)."""
    return not (isinstance(exc, CellTimeout) or is_real_interrupt(exc))


class _Failure:
    """An error text and its location in plugin code, for the rows a plugin failed."""

    __slots__ = ("error", "where")

    def __init__(self, what: str, exc: BaseException):
        self.error = error_text(what, exc)
        self.where = plugin_location(exc)


def _score(
    load: Any,
    plugins: Plugins,
    task: CellTask,
    metrics: list[tuple[Entry, Any, _Failure | None]],
    processed: Estimate,
    stage: list[str],
    raw: Estimate,
) -> list[tuple[Entry, float, _Failure | None, float]]:
    """Every metric's value for one processed estimate, and its ``theory`` (NaN unless the
    pipeline left the oracle's vector unchanged). The population lives in this frame only while
    metrics run, never while a post-processor does; so does the theory's variance, which is a
    function of the true frequencies."""
    cell = task.cell
    truth = load(plugins, task)
    view = frozen_estimate(processed)
    variance = None
    if processed.frequencies_digest() == raw.frequencies_digest():
        variance = _theory_variance(plugins, cell, truth, raw)
    out = []
    for metric, scorer, failure in metrics:
        if failure is not None:
            out.append((metric, math.nan, failure, math.nan))
            continue
        # The same metric stream for every mechanism and pipeline of a repeat: e.g. set-query
        # draws the same random subsets for all methods (paired comparisons).
        mrng = rng_for(cell.seed, "metric", cell.dataset.label, cell.budget.label, cell.repeat, metric.label)
        who = f"metric '{metric.name}'"
        stage[0] = who
        try:
            value = checked_metric_value(who, scorer.score(truth, view, mrng))
        except BaseException as exc:
            if not _contained(exc):
                raise
            out.append((metric, math.nan, _Failure(who, exc), math.nan))
            continue
        theory = _theory(scorer, truth, view, variance) if variance is not None else math.nan
        out.append((metric, value, None, theory))
    return out


def _timed_out(
    task: CellTask, plugins: Plugins | None, finished: list[dict[str, Any]], failure: _Failure, meta: dict[str, int]
) -> list[dict[str, Any]]:
    """The rows of a cell stopped by its time limit: those finished before it, and a failed row for
    every other (pipeline, metric). A protocol's rows are labelled by its outputs, which a failed
    row cannot know: its cell fails whole."""
    failed = failed_cell_rows(task, failure.error, plugins, meta["n"], meta["d"], failure.where)
    label = task.cell.mechanism.label
    if any(r["oracle"] != label for r in finished):
        return failed
    done = {(r["pipeline"], r["metric"]) for r in finished}
    return finished + [r for r in failed if (r["pipeline"], r["metric"]) not in done]


def _make_run_cell():
    def _population_loader():
        """The cache of loaded populations of this process, reachable only through the returned
        function's closure: no module-level helper hands a post-processor the true counts."""
        cache: dict[tuple[Any, ...], Population] = {}
        most = 16

        def load(plugins: Plugins, task: CellTask) -> Population:
            dataset, seed = task.cell.dataset, task.cell.seed
            key = (task.plugins, dataset, seed)
            if key in cache:
                return cache[key]
            ds = plugins.create("dataset", dataset.name, dataset.param_dict)
            population = checked_population(
                f"dataset '{dataset.name}'", ds.load(rng_for(seed, "dataset", dataset.label))
            )
            # Read-only once and for all: every cell sharing it scores against the same truth.
            population = frozen_population(population)
            if len(cache) >= most:
                cache.pop(next(iter(cache)))
            cache[key] = population
            return population

        load.clear = cache.clear  # type: ignore[attr-defined]
        return load

    load_population = _population_loader()

    def run_cell(task: CellTask) -> list[dict[str, Any]]:
        """Evaluate one cell with every pipeline and metric; return its result rows.

        A plugin that raises (anything, ``KeyboardInterrupt`` and ``SystemExit`` included) or
        returns what cannot be scored fails only what depends on it: a dataset or mechanism
        failure fails the whole cell, a pipeline failure that pipeline's rows, a metric failure
        that metric's rows; the error text goes to the row's ``error``, the plugin frames it was
        raised from to ``where``. A cell over its time limit keeps the rows finished in time and
        fails the others. Only the user's Ctrl-C stops the run.
        """
        started = time.perf_counter()
        stage = ["dataset"]
        meta = {"n": 0, "d": 0}
        plugins: Plugins | None = None
        rows: list[dict[str, Any]] = []
        try:
            with cell_guard(task.timeout):
                try:  # a worker may rebuild the plugins: a --plugins-dir file may fail there
                    plugins = _plugins(task.plugins)
                except BaseException as exc:
                    if not _contained(exc):
                        raise
                    failure = _Failure("plugins", exc)
                    rows = failed_cell_rows(task, failure.error, None, where=failure.where)
                else:
                    with one_native_thread():
                        rows = _evaluate(task, plugins, stage, meta, rows)
        except CellTimeout as exc:
            rows = _timed_out(task, plugins, rows, _Failure(stage[0], exc), meta)
        _stamp(rows, started)
        return rows

    def _evaluate(
        task: CellTask, plugins: Plugins, stage: list[str], meta: dict[str, int], rows: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        cell = task.cell
        ds, budget, mech, rep, seed = cell.dataset, cell.budget, cell.mechanism, cell.repeat, cell.seed
        try:
            stage[0] = f"dataset '{ds.name}'"
            population = load_population(plugins, task)
            meta["d"] = population.d
            meta["n"] = ds.sample or population.n
            stage[0] = f"{mech.kind} '{mech.name}'"
            outputs = {
                label: frozen_estimate(est) for label, est in mechanism_outputs(plugins, cell, population).items()
            }
        except BaseException as exc:  # a failing plugin fails its own cell only
            if not _contained(exc):
                raise
            failure = _Failure(stage[0], exc)
            return failed_cell_rows(task, failure.error, plugins, meta["n"], meta["d"], failure.where)
        d = population.d
        del population  # not on the stack while post-processors run

        metrics: list[tuple[Entry, Any, _Failure | None]] = []
        for metric in task.metrics:
            try:
                metrics.append((metric, plugins.create("metric", metric.name, metric.param_dict), None))
            except BaseException as exc:
                if not _contained(exc):
                    raise
                metrics.append((metric, None, _Failure(f"metric '{metric.name}'", exc)))

        for label, estimate in outputs.items():
            meta["n"] = estimate.n
            for pipeline in task.pipelines:
                stage[0] = f"pipeline '{pipeline.label}'"
                try:
                    steps = [plugins.create("postprocessor", s.name, s.param_dict) for s in pipeline.steps]
                    prng = rng_for(seed, "pipeline", ds.label, budget.label, label, rep, pipeline.label)
                    processed = apply_pipeline(steps, estimate, prng, d)
                    notes, info = collect_warnings(processed), row_diagnostics(processed.info)
                except BaseException as exc:
                    if not _contained(exc):
                        raise
                    failure = _Failure(stage[0], exc)
                    scores = [(metric, math.nan, failure, math.nan) for metric, _, _ in metrics]
                else:
                    scores = _score(load_population, plugins, task, metrics, processed, stage, estimate)
                for metric, value, failure, theory in scores:
                    r = result_row(
                        cell,
                        label,
                        pipeline,
                        metric,
                        value=value,
                        error=failure.error if failure else None,
                        greater=_greater(plugins, metric),
                        notes=None if failure else notes,
                        n=meta["n"],
                        d=meta["d"],
                        theory=theory,
                    )
                    r["where"] = failure.where if failure else None
                    r["info"] = None if failure else info
                    rows.append(r)
        return rows

    #: Forget the loaded populations (the runner calls it before a run: a data file may have changed).
    run_cell.clear_population_cache = load_population.clear  # type: ignore[attr-defined]
    run_cell.__qualname__ = run_cell.__name__  # pickled by reference as ldpbench.engine.cell.run_cell
    return run_cell


run_cell = _make_run_cell()


def _theory_variance(plugins: Plugins, cell: Cell, population: Population, estimate: Estimate) -> Any:
    """The unprocessed oracle estimate's per-item expected squared error (its variance, plus the
    squared bias of an oracle declared biased; :mod:`ldpbench.engine.theory`), or None.

    Theory is a diagnostic: an oracle whose variance formula raises loses its ``theory``, never
    its rows."""
    from ldpbench.engine.theory import expected_item_variance

    mech = cell.mechanism
    if mech.kind != "oracle":
        return None
    try:
        return expected_item_variance(
            lambda eps: plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=eps),
            estimate,
            population.frequencies,
            population.n,
        )
    except Exception:  # noqa: BLE001 - a diagnostic never fails a row
        return None


def _theory(scorer: Any, population: Population, processed: Estimate, variance: Any) -> float:
    try:
        return float(scorer.theory(population, processed, variance))
    except Exception:  # noqa: BLE001 - a diagnostic never fails a row
        return math.nan


def collect_warnings(estimate: Estimate) -> str | None:
    """The estimate's declared :attr:`~ldpbench.types.Estimate.warnings`, distinct and "; "-joined
    (None when there are none): the result rows keep them as ``notes``."""
    return "; ".join(dict.fromkeys(str(w) for w in estimate.warnings)) or None


def row_diagnostics(info: Mapping[str, Any]) -> str | None:
    """``info["diagnostics"]`` as compact JSON for the rows' ``info`` column (None when absent).

    A post-processor that makes a per-repeat choice worth studying (EM-Murakami's alpha) puts a
    small mapping of JSON scalars there; everything else in ``Estimate.info`` stays out of the
    rows, which must stay small.
    """
    found = info.get("diagnostics")
    if not isinstance(found, Mapping) or not found:
        return None
    return json.dumps(dict(found), sort_keys=True, allow_nan=True)


def _stamp(rows: list[dict[str, Any]], started: float) -> None:
    elapsed = time.perf_counter() - started
    for r in rows:
        r["elapsed"] = elapsed
