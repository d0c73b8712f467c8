"""Metrics of identified itemsets (a protocol's :class:`~ldpbench.types.IdentifiedItemsets`;
docs/heavy-hitters.md).

T is the true top-k itemsets (``ldpbench.types.itemsets.true_top_itemsets``: the k itemsets of any
size that most users' sets contain, ties by the smaller size, then the smaller bit mask), computed
from the population's CSR sets; I the identified itemsets, k the protocol's. Itemsets are compared
as bit masks over the items that can be in T (vectorized, no itemset enumerated):

- ``itemset-precision`` = |I ∩ T| / |I| (1 when I is empty), ``itemset-recall`` = |I ∩ T| / k,
  ``itemset-f1`` their harmonic mean (0 when both are 0);
- ``itemset-ncr``, the normalized cumulative rank of Wang, Li & Jha (IEEE S&P 2018) over itemsets:
  the itemset of true rank i scores ``k - i + 1``; NCR is the score of I ∩ T over ``k (k + 1) / 2``.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import IdentifiedItemsets, Metric, MetricTags, Population
from ldpbench.types.domain import IDENTIFIED_ITEMSETS
from ldpbench.types.itemsets import itemset_masks, true_top_itemsets

from .heavy_hitters import precision_recall_f

#: The last few truths' top itemsets: ``(offsets, members, counts, k, answer)``, matched by the
#: arrays' identity (held here, so an id cannot be reused while cached; scoring sees them
#: read-only). Every itemset metric of every cell of one dataset then computes T once.
_RECENT: list[tuple[object, object, object, int, tuple[np.ndarray, np.ndarray, np.ndarray]]] = []


def _top_itemsets(truth: Population, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    for offsets, members, counts, kk, answer in _RECENT:
        if offsets is truth.offsets and members is truth.members and counts is truth.counts and kk == k:
            return answer
    answer = true_top_itemsets(truth, k)
    _RECENT.insert(0, (truth.offsets, truth.members, truth.counts, k, answer))
    del _RECENT[4:]
    return answer


class _ItemsetMetric(Metric):
    greater_is_better = True

    def tags(self) -> MetricTags:
        return MetricTags(results=(IDENTIFIED_ITEMSETS,))

    @staticmethod
    def _found(truth: Population, result: IdentifiedItemsets) -> tuple[np.ndarray, np.ndarray]:
        """``(true top-k masks, which of them I holds)`` and, second, which of I is in T."""
        top, _, items = _top_itemsets(truth, result.k)
        mine = itemset_masks(truth, result.itemset_offsets, result.itemset_members, items)
        return np.isin(top, mine), np.isin(mine, top)

    def _prf(self, truth: Population, result: IdentifiedItemsets) -> tuple[float, float, float]:
        in_mine, in_top = self._found(truth, result)
        return precision_recall_f(int(in_top.sum()), int(in_top.size), int(in_mine.size))


class ItemsetPrecision(_ItemsetMetric):
    """|I ∩ T| / |I|: the share of identified itemsets among the true top-k itemsets."""

    name = "itemset-precision"

    def score(self, truth: Population, estimate: IdentifiedItemsets, rng: np.random.Generator) -> float:
        return self._prf(truth, estimate)[0]


class ItemsetRecall(_ItemsetMetric):
    """|I ∩ T| / k: the share of the true top-k itemsets identified."""

    name = "itemset-recall"

    def score(self, truth: Population, estimate: IdentifiedItemsets, rng: np.random.Generator) -> float:
        return self._prf(truth, estimate)[1]


class ItemsetF1(_ItemsetMetric):
    """The F1 score of the identified top-k itemsets."""

    name = "itemset-f1"

    def score(self, truth: Population, estimate: IdentifiedItemsets, rng: np.random.Generator) -> float:
        return self._prf(truth, estimate)[2]


class ItemsetNCR(_ItemsetMetric):
    """Normalized cumulative rank over itemsets (Wang, Li & Jha, IEEE S&P 2018)."""

    name = "itemset-ncr"

    def score(self, truth: Population, estimate: IdentifiedItemsets, rng: np.random.Generator) -> float:
        in_mine, _ = self._found(truth, estimate)
        k = estimate.k
        weights = k - np.arange(in_mine.size)
        return float(weights[in_mine].sum() / (k * (k + 1) / 2))


@hookimpl
def ldpbench_register_metrics(registry):
    for cls in (ItemsetPrecision, ItemsetRecall, ItemsetF1, ItemsetNCR):
        registry.register(cls)
