"""One cell: population -> mechanism -> pipelines -> metrics, and its result rows.

:func:`run_cell` is what every executor runs, in this process, a forked worker, a spawned one or a
Dask worker: it loads the cell's population (cached per process), runs the mechanism
(:mod:`.mechanism`), applies every pipeline (:mod:`.pipeline`), scores every processed estimate
(:mod:`.scoring`) and returns the cell's rows (:mod:`.rows`). Whatever a plugin does fails only
what depends on it (:mod:`ldpbench.boundary`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.boundary.failures import Failure
from ldpbench.boundary.guard import CellTimeout, cell_guard, contained
from ldpbench.boundary.values import checked_population, frozen_population, frozen_result
from ldpbench.engine.mechanism import mechanism_outputs
from ldpbench.engine.pipeline import apply_pipeline, collect_warnings, row_diagnostics
from ldpbench.engine.poisoning import poisoning_plan, with_fake_labels
from ldpbench.engine.rows import declared_budgets, failed_cell_rows, greater_is_better, result_row, stamp_elapsed
from ldpbench.engine.scoring import MetricSlot, prepare_metrics, score_estimate
from ldpbench.engine.shuffling import central_columns
from ldpbench.engine.simulate import MARGINAL_CLAIM
from ldpbench.engine.threads import one_native_thread
from ldpbench.loading.manager import Plugins, PluginSource
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Entry, Pipeline
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Estimate, Poisoning, Population
from ldpbench.types.attributes import output_d, output_truth
from ldpbench.types.data import declared_buckets

Rows = list[dict[str, Any]]


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

    def failed_rows(
        self, error: str, plugins: Plugins | None, n: int = 0, d: int = 0, where: str | None = None
    ) -> Rows:
        """A failed row for every pipeline and metric of the cell (its dataset or mechanism failed,
        or its worker died)."""
        return failed_cell_rows(self.cell, self.pipelines, self.metrics, error, plugins, n, d, where)


@dataclass(frozen=True)
class CellBundle:
    """Cells that share a metric stream (same dataset, budget and repeat; one per mechanism), run
    one after another as one task of an executor that spreads tasks over processes
    (``ExecutorTags.bundles``). Their metrics draw the same random queries (e.g. set-query's
    subsets, cached per process), so one worker draws them once instead of every worker that gets
    one of the cells (docs/scale-out.md, "Cost model").

    Each cell keeps its own guard and time limit (:func:`run_bundle` runs :func:`run_cell` on each):
    a failing cell yields its failed rows beside the others' rows. A bundle whose worker died or
    hung is rerun cell by cell by the runner, so the culprit is told apart from its bystanders.
    """

    tasks: tuple[CellTask, ...]

    @property
    def timeout(self) -> float | None:
        """The bundle's time limit: the sum of its cells' (None if any cell has none), what an
        executor that kills a stuck worker reads (``hard_limit``)."""
        limits = [t.timeout for t in self.tasks]
        if not limits or any(not t for t in limits):
            return None
        return float(sum(limits))  # type: ignore[arg-type]

    def failed_rows(self, error: str, plugins: Plugins | None) -> Rows:
        """A failed row for every pipeline and metric of every cell of the bundle."""
        return [r for t in self.tasks for r in t.failed_rows(error, plugins)]


def bundle_tasks(tasks: list[CellTask]) -> list[CellBundle]:
    """The tasks grouped by metric stream (dataset, budget, repeat), in the order of each group's
    first task: the stream is keyed by ``rng_for(seed, "metric", dataset, budget, repeat, metric)``
    (:mod:`ldpbench.engine.scoring`), never by the mechanism."""
    groups: dict[tuple[Any, ...], list[CellTask]] = {}
    for task in tasks:
        c = task.cell
        groups.setdefault((c.seed, c.dataset.label, c.budget.label, c.repeat), []).append(task)
    return [CellBundle(tuple(g)) for g in groups.values()]


def run_bundle(bundle: CellBundle) -> list[Rows]:
    """The rows of every cell of the bundle, cell by cell (:func:`run_cell` on each)."""
    return [run_cell(task) for task in bundle.tasks]


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


def _timed_out(task: CellTask, plugins: Plugins | None, finished: Rows, failure: Failure, meta: dict[str, int]) -> Rows:
    """The rows of a cell stopped by its time limit: those finished before it, and a failed row for
    every other (pipeline, metric). A protocol's rows are labelled by its outputs, which a failed
    row cannot know: its cell fails whole."""
    failed = task.failed_rows(failure.error, plugins, meta["n"], meta["d"], failure.where)
    label = task.cell.output_label
    if any(r["oracle"] != label for r in finished):
        return failed
    done = {(r["pipeline"], r["metric"]) for r in finished}
    return finished + [r for r in failed if (r["pipeline"], r["metric"]) not in done]


def _make_run_cell() -> Callable[[CellTask], Rows]:
    def _population_loader() -> Callable[[Plugins, CellTask], Population]:
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

    def run_cell(task: CellTask) -> Rows:
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
        rows: Rows = []
        try:
            with cell_guard(task.timeout):
                try:  # a worker may rebuild the plugins: a --plugins-dir file may fail there
                    plugins = _plugins(task.plugins)
                except BaseException as exc:
                    if not contained(exc):
                        raise
                    failure = Failure("plugins", exc)
                    rows = task.failed_rows(failure.error, None, where=failure.where)
                else:
                    with one_native_thread():
                        rows = _evaluate(task, plugins, stage, meta, rows)
        except CellTimeout as exc:
            rows = _timed_out(task, plugins, rows, Failure(stage[0], exc), meta)
        stamp_elapsed(rows, started)
        return rows

    def _evaluate(task: CellTask, plugins: Plugins, stage: list[str], meta: dict[str, int], rows: Rows) -> Rows:
        """The cell's rows, appended to ``rows`` as they finish (a time-out keeps them)."""
        cell = task.cell
        try:
            stage[0] = f"dataset '{cell.dataset.name}'"
            population = load_population(plugins, task)
            meta["d"], meta["n"] = population.d, cell.dataset.sample or population.n
            plan = None
            if cell.poison is not None:
                stage[0] = f"attack '{cell.poison.attack_label}'"
                plan = poisoning_plan(cell, population, meta["n"])
                meta["m"] = plan.fake_users
            stage[0] = f"{cell.mechanism.kind} '{cell.mechanism.name}'"
            keep = _needs_reports(plugins, task.pipelines)
            outputs = {
                label: frozen_result(e)
                for label, e in mechanism_outputs(plugins, cell, population, plan, keep_reports=keep).items()
            }
            if keep and plan is not None:  # the fake labels, in the order the defense sees the reports
                plan = with_fake_labels(plan, cell, meta["n"])
        except BaseException as exc:  # a failing plugin fails its own cell only
            if not contained(exc):
                raise
            failure = Failure(stage[0], exc)
            return task.failed_rows(failure.error, plugins, meta["n"], meta["d"], failure.where)
        record = population.record
        names = population.attributes.names if population.attributes is not None else ()
        users, whole_d = meta["n"], population.d
        del population  # not on the stack while post-processors run
        # Nor the targets: only the metrics' truth carries them (Population.poisoning).
        poisoned = functools.partial(_poisoned_truth, plan) if plan is not None else None
        del plan
        metrics = _build_metrics(plugins, task.metrics)
        for label, estimate in outputs.items():
            meta["n"] = estimate.n
            truth = functools.partial(_truth_for, load_population, plugins, task, label, poisoned)
            if record == "tuple":  # an output per attribute, scored against its marginal
                truth, meta["d"] = _attribute_truth(truth, label[len(cell.mechanism.label) + 1 :])
            elif k := declared_buckets(estimate, whole_d):  # over k contiguous buckets of [d]
                truth, meta["d"] = _bucketed_truth(truth, k), k
            else:
                meta["d"] = whole_d
            if task.timeout:  # each pipeline scored as soon as applied: rows finished in time keep their numbers
                for pipeline in task.pipelines:
                    applied = _applied(task, plugins, label, estimate, pipeline, stage, meta)
                    rows.extend(_scored_rows(task, plugins, label, estimate, applied, metrics, truth, stage, meta))
            else:  # every pipeline applied, then the metrics told them all (Metric.prepare), then scored
                every = [_applied(task, plugins, label, estimate, p, stage, meta) for p in task.pipelines]
                prepare_metrics(truth, cell, metrics, [a.processed for a in every if a.failure is None], stage)
                for applied in every:
                    rows.extend(_scored_rows(task, plugins, label, estimate, applied, metrics, truth, stage, meta))
        if record == "tuple":
            rows.extend(attribute_mean_rows(rows, cell, names, users, whole_d))
        return rows

    #: Forget the loaded populations (the runner calls it before a run: a data file may have changed).
    run_cell.clear_population_cache = load_population.clear  # type: ignore[attr-defined]
    run_cell.__qualname__ = run_cell.__name__  # pickled by reference as ldpbench.engine.cell.run_cell
    return run_cell


#: The averaged-over-attributes view of a tuple population's outputs (docs/multidimensional.md).
ATTRIBUTES_MEAN = "attributes-mean"


def attribute_mean_rows(rows: Rows, cell: Cell, names: tuple[str, ...], n: int, d: int) -> Rows:
    """One more row per (pipeline, metric) and round suffix: ``mechanism:attributes-mean`` (or
    ``mechanism:attributes-mean:round-t``, ``...:rounds-mean`` over rounds) whose value is the mean,
    over the attributes, of the per-attribute rows' values in this repeat (for MSE the averaged MSE
    of Arcolezi et al., CIKM 2021, §5: ``(1/a) sum_j MSE_j``), its ``theory`` the mean of theirs,
    ``n`` the users and ``d`` the whole record's ``sum d_j``. A failed attribute row fails it (NaN,
    the first error). Only groups that cover every attribute, and only for two or more attributes;
    a row like any other for the leaderboard, the gate and the significance tests."""
    if len(names) < 2:
        return []
    prefix = cell.mechanism.label + ":"
    groups: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        label = r["oracle"]
        if not label.startswith(prefix):
            continue
        name, _, part = label[len(prefix) :].partition(":")
        if name in names:
            groups.setdefault((part, r["pipeline"], r["metric"]), {})[name] = r
    out = []
    for (part, _, _), by_name in groups.items():
        if len(by_name) != len(names):
            continue
        parts = [by_name[name] for name in names]
        first = parts[0]
        failed = next((r for r in parts if r["error"]), None)
        row = dict(first)
        row["oracle"] = prefix + ATTRIBUTES_MEAN + (":" + part if part else "")
        row["n"], row["d"] = int(n), int(d)
        row.update(central_columns(cell, int(n)) if cell.poison is None else {})
        row["info"] = None
        row["notes"] = "; ".join(dict.fromkeys(str(r["notes"]) for r in parts if r["notes"])) or None
        if failed is not None:
            row["value"], row["theory"] = math.nan, math.nan
            row["error"], row["where"] = f"{failed['oracle']}: {failed['error']}", failed.get("where")
        else:
            row["value"] = float(np.mean([r["value"] for r in parts]))
            row["theory"] = float(np.mean([r["theory"] for r in parts]))
            row["error"], row["where"] = None, None
        out.append(row)
    return out


def _bucketed_truth(truth: Callable[[], Population], k: int) -> Callable[[], Population]:
    """The truth of an estimate over ``k`` buckets (``Population.bucketed``), loaded when scored."""
    return lambda: truth().bucketed(k)


def _attribute_truth(truth: Callable[[], Population], suffix: str) -> tuple[Callable[[], Population], int]:
    """The truth of output ``mechanism:suffix`` of a tuple population (its attribute's marginal,
    docs/multidimensional.md), and the domain size that goes in its rows."""
    d = output_d(truth(), suffix)
    # Loaded again when scored, as the whole population is: never held while post-processors run.
    return (lambda: output_truth(truth(), suffix)), d


def _needs_reports(plugins: Plugins, pipelines: tuple[Pipeline, ...]) -> bool:
    """Whether a step of the cell's pipelines declares ``requires_reports`` (validation has refused
    such a step off the per-user path or after an oracle without ``support_matrix``)."""
    for pipeline in pipelines:
        for step in pipeline.steps:
            try:
                needs = plugins.create("postprocessor", step.name, step.param_dict).tags()
            except Exception:  # noqa: BLE001 - the step's own failure is reported when its pipeline runs
                continue
            if needs.requires_reports:
                return True
    return False


def _truth_for(
    load: Callable[[Plugins, CellTask], Population],
    plugins: Plugins,
    task: CellTask,
    label: str,
    poisoned: Callable[[Population], Population] | None = None,
) -> Population:
    """The truth output ``label`` is scored against: the population, or round t's users for a
    per-round output of a sequence population (``Population.truth_for``); in an attacked cell, the
    genuine population carrying the attack's plan (``poisoned``)."""
    truth = load(plugins, task).truth_for(label)
    return poisoned(truth) if poisoned is not None else truth


def _poisoned_truth(plan: Poisoning, truth: Population) -> Population:
    """The genuine population with the targets and fake users of its cell (docs/poisoning.md)."""
    return truth.replace(poisoning=plan)


def _build_metrics(plugins: Plugins, entries: tuple[Entry, ...]) -> list[MetricSlot]:
    """Each metric of the cell built once, or the failure of its constructor (which fails only its rows)."""
    metrics: list[MetricSlot] = []
    for metric in entries:
        try:
            metrics.append((metric, plugins.create("metric", metric.name, metric.param_dict), None))
        except BaseException as exc:
            if not contained(exc):
                raise
            metrics.append((metric, None, Failure(f"metric '{metric.name}'", exc)))
    return metrics


@dataclass(frozen=True)
class _Applied:
    """One pipeline applied to one output: the processed estimate and what its rows keep, or the
    failure of a step (``processed`` is then the unprocessed estimate, never scored)."""

    pipeline: Pipeline
    processed: Any
    notes: str | None = None
    info: str | None = None
    exact_marginal_notes: str | None = None
    failure: Failure | None = None


def _applied(
    task: CellTask,
    plugins: Plugins,
    label: str,
    estimate: Estimate,
    pipeline: Pipeline,
    stage: list[str],
    meta: dict[str, int],
) -> _Applied:
    """One output's estimate through one pipeline (its steps' failure caught)."""
    cell = task.cell
    stage[0] = f"pipeline '{pipeline.label}'"
    try:
        steps = [plugins.create("postprocessor", s.name, s.param_dict) for s in pipeline.steps]
        prng = rng_for(cell.seed, "pipeline", cell.dataset.label, cell.budget.label, label, cell.repeat, pipeline.label)
        processed = apply_pipeline(steps, estimate, prng, meta["d"])
        notes, info = collect_warnings(processed), row_diagnostics(processed.info)
        exact_marginal_notes = notes_exact_for_marginal_metrics(estimate, processed)
    except BaseException as exc:
        if not contained(exc):
            raise
        return _Applied(pipeline, estimate, failure=Failure(stage[0], exc))
    return _Applied(pipeline, processed, notes, info, exact_marginal_notes)


def _scored_rows(
    task: CellTask,
    plugins: Plugins,
    label: str,
    estimate: Estimate,
    applied: _Applied,
    metrics: list[MetricSlot],
    truth: Callable[[], Population],
    stage: list[str],
    meta: dict[str, int],
) -> Rows:
    """One output's rows for one applied pipeline: every metric scored (or the pipeline's failure)."""
    cell, pipeline, failed = task.cell, applied.pipeline, applied.failure
    if failed is not None:
        scores = [(metric, math.nan, failed, math.nan) for metric, _, _ in metrics]
    else:
        scores = score_estimate(truth, plugins, cell, metrics, applied.processed, estimate, stage)
    rows = []
    budgets = declared_budgets(estimate.info)
    built = {id(entry): obj for entry, obj, _ in metrics}
    for metric, value, failure, theory in scores:
        if not failure and _marginal_metric(built.get(id(metric))):
            row_notes = applied.exact_marginal_notes
        else:
            row_notes = None if failure else applied.notes
        r = result_row(
            cell,
            label,
            pipeline,
            metric,
            value=value,
            error=failure.error if failure else None,
            greater=greater_is_better(plugins, metric),
            notes=row_notes,
            n=meta["n"],
            d=meta["d"],
            theory=theory,
            budgets=budgets,
            fake_users=meta.get("m"),
        )
        r["where"] = failure.where if failure else None
        r["info"] = None if failure else applied.info
        rows.append(r)
    return rows


def notes_exact_for_marginal_metrics(estimate: Any, processed: Any) -> str | None:
    """The notes of a row whose metric's expectation depends only on each item's law: without the
    oracle's "exact marginals only" note while the pipeline left the vector as the oracle gave it
    (a post-processor that changes it mixes the items, and the note stands)."""
    if not (isinstance(estimate, Estimate) and isinstance(processed, Estimate)):  # identified items
        return collect_warnings(processed)
    unchanged = not processed.query_transforms and np.array_equal(processed.frequencies, estimate.frequencies)
    kept = (str(w) for w in processed.warnings if not (unchanged and MARGINAL_CLAIM in str(w)))
    return "; ".join(dict.fromkeys(kept)) or None


def _marginal_metric(metric: Any) -> bool:
    """Whether a built metric declares ``marginal_expectation`` (a failing ``tags()`` is no claim)."""
    if metric is None:
        return False
    try:
        return bool(metric.tags().marginal_expectation)
    except Exception:  # noqa: BLE001 - its own rows fail when it scores; here it only keeps a note
        return False


run_cell = _make_run_cell()
