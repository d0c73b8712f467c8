"""Metrics of identified heavy hitters (a protocol's :class:`~ldpbench.types.IdentifiedItems`;
docs/heavy-hitters.md).

The true top-k ``T`` holds the k items most users hold (k is the one the protocol was asked for;
ties at the k-th count broken by the smaller item, so that ``T`` is a function of the population).
With ``I`` the identified items:

- ``topk-precision`` = |I ∩ T| / |I| (1 when I is empty: no false positive was made),
  ``topk-recall`` = |I ∩ T| / k, ``topk-f1`` their harmonic mean (0 when both are 0) — Wang, Li &
  Jha, TDSC 2019, F1 of the identified top-k;
- ``ncr``, the normalized cumulative rank (Wang, Li & Jha, IEEE S&P 2018): the item of true
  rank i (1 = most frequent) scores ``k - i + 1``; NCR is the score of I ∩ T over the score of
  T, ``k (k + 1) / 2``, so finding the heaviest items counts most;
- ``identified-mse``: the mean squared error of the estimated frequencies of the identified items
  (fraction scale; an item nobody holds has true frequency 0); 0 when I is empty;
- ``bits-per-user``: the mean bits a user sent; ``server-time``: the aggregator's seconds (a
  measurement: it differs between runs).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import IdentifiedItems, Metric, MetricTags, Population
from ldpbench.types.domain import IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS

from .heavy_hitters import precision_recall_f


def true_top_k(truth: Population, k: int) -> np.ndarray:
    """The k items most users hold, most frequent first (ties: the smaller item first)."""
    items = truth.items
    order = np.lexsort((items, -truth.counts))[:k]
    return items[order]


def true_frequencies(truth: Population, items: np.ndarray) -> np.ndarray:
    """The true frequency of each item (0 for one nobody holds), by binary search in the sorted items."""
    held = truth.items
    items = np.asarray(items, dtype=np.uint64)
    at = np.minimum(np.searchsorted(held, items), max(held.size - 1, 0))
    found = held.size > 0
    hit = (held[at] == items) if found else np.zeros(items.size, dtype=bool)
    return np.where(hit, truth.counts[at] / truth.n, 0.0)


class _IdentificationMetric(Metric):
    greater_is_better = True

    def tags(self) -> MetricTags:
        return MetricTags(results=(IDENTIFIED_ITEMS,))

    @staticmethod
    def _overlap(truth: Population, result: IdentifiedItems) -> tuple[int, int, int]:
        top = true_top_k(truth, result.k)
        hits = int(np.isin(np.asarray(result.items, dtype=np.uint64), top).sum())
        return hits, int(np.asarray(result.items).size), int(top.size)


class TopKPrecision(_IdentificationMetric):
    """|I ∩ T| / |I|: the share of identified items that are in the true top-k."""

    name = "topk-precision"

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        return precision_recall_f(*self._overlap(truth, estimate))[0]


class TopKRecall(_IdentificationMetric):
    """|I ∩ T| / k: the share of the true top-k identified."""

    name = "topk-recall"

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        return precision_recall_f(*self._overlap(truth, estimate))[1]


class TopKF1(_IdentificationMetric):
    """The F1 score of the identified top-k (Wang, Li & Jha, TDSC 2019)."""

    name = "topk-f1"

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        return precision_recall_f(*self._overlap(truth, estimate))[2]


class NCR(_IdentificationMetric):
    """Normalized cumulative rank (Wang, Li & Jha, IEEE S&P 2018)."""

    name = "ncr"

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        top = true_top_k(truth, estimate.k)
        k = estimate.k
        weights = k - np.arange(top.size)  # rank i (1-based) scores k - i + 1
        found = np.isin(top, np.asarray(estimate.items, dtype=np.uint64))
        return float(weights[found].sum() / (k * (k + 1) / 2))


class IdentifiedMSE(_IdentificationMetric):
    """Mean squared error of the identified items' estimated frequencies (fraction scale)."""

    name = "identified-mse"
    greater_is_better = False

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        f = np.asarray(estimate.frequencies, dtype=float)
        if f.size == 0:
            return 0.0
        return float(np.mean((f - true_frequencies(truth, estimate.items)) ** 2))


class BitsPerUser(_IdentificationMetric):
    """Mean bits a user sent (the protocol's encoding of its reports); identified itemsets too."""

    name = "bits-per-user"
    greater_is_better = False

    def tags(self) -> MetricTags:
        return MetricTags(results=(IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS))

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        return float(estimate.bits_per_user)


class ServerTime(_IdentificationMetric):
    """The aggregator's wall-clock seconds: a measurement, not reproducible like the others;
    identified itemsets too."""

    name = "server-time"
    greater_is_better = False

    def tags(self) -> MetricTags:
        return MetricTags(results=(IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS))

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        return float(estimate.server_seconds) if math.isfinite(estimate.server_seconds) else math.nan


@hookimpl
def ldpbench_register_metrics(registry):
    for cls in (TopKPrecision, TopKRecall, TopKF1, NCR, IdentifiedMSE, BitsPerUser, ServerTime):
        registry.register(cls)
