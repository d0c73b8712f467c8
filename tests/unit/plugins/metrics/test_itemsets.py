"""Metrics of identified itemsets: precision, recall, F1 and NCR against the true top-k itemsets."""

from __future__ import annotations

import numpy as np

from ldpbench.types import IdentifiedItemsets, Population
from ldpbench_plugins.metrics.itemsets import ItemsetF1, ItemsetNCR, ItemsetPrecision, ItemsetRecall


def _truth() -> Population:
    # {0,1} x 5, {0} x 2, {1,2} x 2, {3} x 1: supports {0} 7, {1} 7, {0,1} 5, {2} 2, {1,2} 2, {3} 1
    sets = [[0, 1]] * 5 + [[0]] * 2 + [[1, 2]] * 2 + [[3]]
    sizes = np.array([len(s) for s in sets])
    return Population.from_sets(np.concatenate([[0], np.cumsum(sizes)]), np.concatenate(sets), 4)


def _result(itemsets, k):
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in itemsets])]).astype(np.int64)
    members = np.array([v for s in itemsets for v in s], dtype=np.uint64)
    return IdentifiedItemsets(
        items=np.arange(len(itemsets), dtype=np.uint64),
        frequencies=np.linspace(0.9, 0.1, len(itemsets)),
        n=10,
        epsilon=1.0,
        k=k,
        itemset_offsets=offsets,
        itemset_members=members,
    )


def test_scores_against_the_true_top_itemsets():
    truth, rng = _truth(), np.random.default_rng(0)
    # true top 3: {0} (7), {1} (7), {0,1} (5); ranks 1, 2, 3 score 3, 2, 1 of 6
    exact = _result([(0,), (1,), (0, 1)], 3)
    assert [m().score(truth, exact, rng) for m in (ItemsetPrecision, ItemsetRecall, ItemsetF1, ItemsetNCR)] == [1.0] * 4
    # {0,1} and {1} right, {1,2} (2 users) and {0,3} (nobody, in another order) wrong
    mixed = _result([(1, 0), (1,), (1, 2), (3, 0)], 3)
    assert ItemsetPrecision().score(truth, mixed, rng) == 0.5
    assert np.isclose(ItemsetRecall().score(truth, mixed, rng), 2 / 3)
    assert np.isclose(ItemsetF1().score(truth, mixed, rng), 2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert np.isclose(ItemsetNCR().score(truth, mixed, rng), (2 + 1) / 6)
    # an item the population never saw, and the empty result
    assert ItemsetPrecision().score(truth, _result([(0, 9)], 3), rng) == 0.0
    assert ItemsetPrecision().score(truth, _result([], 3), rng) == 1.0
    assert ItemsetNCR().score(truth, _result([], 3), rng) == 0.0
