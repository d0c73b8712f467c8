"""Score one processed estimate with every metric of the cell, and give each value its theory.

The true population is handed to metrics only here, and only while they run: a post-processor
never has it on its stack. So is the theory's variance, a function of the true frequencies
(:mod:`ldpbench.engine.theory`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ldpbench.boundary.failures import Failure
from ldpbench.boundary.guard import contained
from ldpbench.boundary.values import checked_metric_value, frozen_result
from ldpbench.engine.theory import expected_item_variance
from ldpbench.loading.manager import Plugins
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Entry
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Estimate, IdentifiedItems, Metric, Population

#: A metric of the cell: its entry, the built scorer, or the failure that prevented building it.
MetricSlot = tuple[Entry, Metric | None, Failure | None]
#: One score: the metric, its value (NaN on failure), the failure, and the value's theory.
Score = tuple[Entry, float, Failure | None, float]


def score_estimate(
    truth: Callable[[], Population],
    plugins: Plugins,
    cell: Cell,
    metrics: Sequence[MetricSlot],
    processed: Estimate | IdentifiedItems,
    raw: Estimate | IdentifiedItems,
    stage: list[str],
) -> list[Score]:
    """Every metric's value for one processed estimate, and its ``theory`` (NaN unless the
    pipeline left the oracle's vector unchanged). ``truth`` loads the population (cached);
    ``stage[0]`` names the plugin running, for a time-out's message."""
    population = truth()
    view = frozen_result(processed)
    variance = None
    if _same_vector(processed, raw) and cell.poison is None:  # no theory of a poisoned estimate
        variance = _theory_variance(plugins, cell, population, raw)
    out: list[Score] = []
    for metric, scorer, failure in metrics:
        if failure is not None or scorer is None:
            out.append((metric, math.nan, failure, math.nan))
            continue
        # The same metric stream for every mechanism and pipeline of a repeat: e.g. set-query
        # draws the same random subsets for all methods (paired comparisons).
        mrng = rng_for(cell.seed, "metric", cell.dataset.label, cell.budget.label, cell.repeat, metric.label)
        who = f"metric '{metric.name}'"
        stage[0] = who
        try:
            if view.result not in scorer.tags().results:  # the validator refuses it; never score it
                raise TypeError(f"{who} does not score a result of kind '{view.result}'")
            value = checked_metric_value(who, scorer.score(population, view, mrng))
        except BaseException as exc:
            if not contained(exc):
                raise
            out.append((metric, math.nan, Failure(who, exc), math.nan))
            continue
        theory = _theory(scorer, population, view, variance) if variance is not None else math.nan
        out.append((metric, value, None, theory))
    return out


def prepare_metrics(
    truth: Callable[[], Population],
    cell: Cell,
    metrics: Sequence[MetricSlot],
    processed: Sequence[Estimate | IdentifiedItems],
    stage: list[str],
) -> None:
    """Tell every built metric the estimates it is about to score (``Metric.prepare``), so that it
    can share work between them; each gets them read-only, those of a kind it scores only, and a
    generator in the state :func:`score_estimate` hands its ``score`` (a fresh one: the calls that
    follow get theirs). What a metric raises here is ignored: it only loses its speed-up, and its
    :func:`score_estimate` calls report their own failures. The caller calls it only when no time
    limit is in force (:mod:`ldpbench.engine.cell`)."""
    population = None
    every = [frozen_result(p) for p in processed]  # read-only views, shared by the metrics
    for metric, scorer, failure in metrics:
        if failure is not None or scorer is None:
            continue
        stage[0] = f"metric '{metric.name}'"
        try:
            kinds = scorer.tags().results
            views = [v for v in every if v.result in kinds]
            if len(views) < 2:
                continue
            if population is None:
                population = truth()
            mrng = rng_for(cell.seed, "metric", cell.dataset.label, cell.budget.label, cell.repeat, metric.label)
            scorer.prepare(population, views, mrng)
        except BaseException as exc:
            if not contained(exc):
                raise


def _same_vector(a: Estimate, b: Estimate) -> bool:
    """Whether two estimates carry the same vector, bit for bit (and the same items): what equal
    :meth:`~ldpbench.types.Estimate.frequencies_digest` values say, without hashing both vectors
    for every pipeline (a memory comparison of the float64 words)."""
    fa = np.ascontiguousarray(a.frequencies, dtype=np.float64)
    fb = np.ascontiguousarray(b.frequencies, dtype=np.float64)
    if fa.shape != fb.shape or (a.items is None) != (b.items is None):
        return False
    if a.items is not None and not np.array_equal(
        np.asarray(a.items, dtype=np.int64), np.asarray(b.items, dtype=np.int64)
    ):
        return False
    return bool(np.array_equal(fa.view(np.int64), fb.view(np.int64)))


def _theory_variance(plugins: Plugins, cell: Cell, population: Population, estimate: Estimate) -> Any:
    """The unprocessed oracle estimate's per-item expected squared error (its variance, plus the
    squared bias of an oracle declared biased; :mod:`ldpbench.engine.theory`), or None.

    Theory is a diagnostic: an oracle whose variance formula raises loses its ``theory``, never
    its rows."""
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
