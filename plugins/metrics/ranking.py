"""Ranking quality: NDCG@k, flat and [A17]'s list of lists; and the size of the ranked list.

NDCG ([A17] §4.1; algorithms.md §6.5): the relevance of an item is its **true share** of the
evaluated universe (the items the estimate covers: the whole domain for an oracle, the head-list
records for Blender, rescaled to sum to 1 once the wildcard is removed). Items are ranked by the
estimate (ties broken by item position, deterministic), and

    DCG@k = sum_{i=1..k} (2^rel(item at rank i) - 1) / log2(i + 1),   NDCG@k = DCG@k / IDCG@k,

where IDCG@k ranks by the truth. For record data (``Population.parents``: record -> query)
``structure: queries`` ranks the queries (a query's relevance and score are the sums over its
records, or the protocol's own query estimates, see below), and ``structure: list-of-lists`` is
[A17]'s generalization: every query's URL list gets its own NDCG^q@k (URLs ranked by their record
estimates, relevance = the record's true share within the query), and

    DCG^Q@k = sum_{i=1..k} (2^rel(q_i) - 1) / log2(i + 1) * NDCG^{q_i}@k

over the estimated query order; IDCG^Q@k is the same sum over the true query order with every
inner factor 1 (``ideal_inner: one``, the default: the ideal list is perfect at both levels) or
with the estimate's NDCG^q (``ideal_inner: estimated``; [A17]'s wording admits both). With the
default, list-of-lists NDCG <= query-only NDCG, with equality when every URL list is perfectly
ordered. A query whose records all have true frequency 0 has NDCG^q = 1 (nothing to misplace).

Query scores (``query_scores``): ``protocol`` uses the query-level estimates a protocol reports in
``Estimate.info`` (Blender's client and blended query estimates are not sums of their record
estimates, [A17] Fig. 9), as long as no post-processor changed the estimate; otherwise, and with
``sum``, a query's score is the sum of its records' estimates.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, Population

from ._align import aligned_truth


def _gain(rel: np.ndarray) -> np.ndarray:
    return np.exp2(rel) - 1.0


def _discounts(m: int) -> np.ndarray:
    """``1 / log2(i + 1)`` for ranks ``i = 1..m``."""
    return 1.0 / np.log2(np.arange(2, m + 2))


def ranking(scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """The first ``k`` positions (all if ``None``) by decreasing score, ties broken by position
    (the deterministic order NDCG uses). O(d) selection, then a sort of the selected few."""
    scores = np.asarray(scores, dtype=float)
    if k is not None and k < scores.size:
        kth = np.partition(scores, scores.size - k)[scores.size - k]  # the k-th largest score
        candidates = np.flatnonzero(scores >= kth)  # all ties at the boundary take part
        order = candidates[np.lexsort((candidates, -scores[candidates]))]
        return order[:k]
    return np.lexsort((np.arange(scores.size), -scores))


def dcg(relevance: np.ndarray, scores: np.ndarray, k: int | None, factors: np.ndarray | None = None) -> float:
    """``sum_{i<=k} gain(rel of the item at rank i) / log2(i + 1) [* factor of that item]``."""
    order = ranking(scores, k)
    terms = _gain(np.asarray(relevance, dtype=float)[order]) * _discounts(order.size)
    if factors is not None:
        terms = terms * np.asarray(factors, dtype=float)[order]
    return float(terms.sum())


def ndcg(relevance: np.ndarray, scores: np.ndarray, k: int | None = None) -> float:
    """Standard NDCG@k of ranking the items by ``scores``; ``nan`` if no item is relevant."""
    ideal = dcg(relevance, relevance, k)
    return dcg(relevance, scores, k) / ideal if ideal > 0 else float("nan")


def within_group_ndcg(group: np.ndarray, relevance: np.ndarray, scores: np.ndarray, k: int | None) -> np.ndarray:
    """NDCG@k of every group's own list (vectorized over groups); groups with no relevance get 1.

    :param group: group index (0..G-1) of every item; relevance is taken as given (shares within
        the group).
    """
    group = np.asarray(group, dtype=np.int64)
    n_groups = int(group.max()) + 1 if group.size else 0
    pos = np.arange(group.size)

    def per_group_dcg(key: np.ndarray) -> np.ndarray:
        order = np.lexsort((pos, -key, group))  # by group, then decreasing key, then position
        g = group[order]
        starts = np.searchsorted(g, np.arange(n_groups))
        rank = np.arange(order.size) - starts[g]  # 0-based rank within the group
        within_k = rank < k if k is not None else np.ones(order.size, dtype=bool)
        terms = np.where(within_k, _gain(relevance[order]) / np.log2(rank + 2), 0.0)
        return np.bincount(g, weights=terms, minlength=n_groups)

    relevance = np.asarray(relevance, dtype=float)
    actual = per_group_dcg(np.asarray(scores, dtype=float))
    ideal = per_group_dcg(relevance)
    return np.divide(actual, ideal, out=np.ones(n_groups), where=ideal > 0)


class NDCG(Metric):
    """NDCG@k of the estimate's ranking: flat, of the queries, or [A17]'s list of lists."""

    name = "ndcg"
    greater_is_better = True
    params = (
        Param("k", int, 10, "rank cut-off (null: the whole list)", min=1, nullable=True),
        Param(
            "structure", str, "flat", "flat items, queries only, or list-of-lists (queries, then URLs)",
            choices=("flat", "queries", "list-of-lists"),
        ),
        Param("ideal_inner", str, "one", "inner factor of IDCG^Q: one, or the estimated NDCG^q", choices=("one", "estimated")),
        Param("query_scores", str, "protocol", "rank queries by the protocol's query estimates, or by sums", choices=("protocol", "sum")),
    )

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        f = aligned_truth(truth, estimate)
        if f.size == 0 or not f.sum() > 0:
            return float("nan")  # an empty list (e.g. no head list) or nothing relevant
        rel = f / f.sum()
        scores = estimate.item_answers()
        if self.structure == "flat":
            return ndcg(rel, scores, self.k)

        items = np.arange(truth.d) if estimate.items is None else np.asarray(estimate.items)
        parents = items if truth.parents is None else np.asarray(truth.parents)[items]
        query_ids, group = np.unique(parents, return_inverse=True)
        group = group.reshape(-1)
        rel_q = np.bincount(group, weights=rel, minlength=query_ids.size)
        score_q = self._query_scores(estimate, query_ids, group, scores)
        if self.structure == "queries":
            return ndcg(rel_q, score_q, self.k)

        # Inner NDCG^q only for the queries that can enter the top k of either ranking.
        needed = np.zeros(query_ids.size, dtype=bool)
        needed[ranking(score_q, self.k)] = True
        if self.ideal_inner == "estimated":
            needed[ranking(rel_q, self.k)] = True
        mine = needed[group]
        share = np.divide(rel, rel_q[group], out=np.zeros_like(rel), where=rel_q[group] > 0)[mine]
        sub_group = np.cumsum(needed)[group[mine]] - 1
        inner = np.ones(query_ids.size)
        inner[needed] = within_group_ndcg(sub_group, share, scores[mine], self.k)
        ideal_factors = inner if self.ideal_inner == "estimated" else None
        ideal = dcg(rel_q, rel_q, self.k, ideal_factors)
        return dcg(rel_q, score_q, self.k, inner) / ideal if ideal > 0 else float("nan")

    def _query_scores(
        self, estimate: Estimate, query_ids: np.ndarray, group: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        out = np.bincount(group, weights=scores, minlength=query_ids.size)
        info = estimate.info or {}
        if self.query_scores != "protocol" or estimate.steps or "query_frequencies" not in info:
            return out
        given_ids = np.asarray(info.get("queries", []), dtype=np.int64)
        given = np.asarray(info["query_frequencies"], dtype=float)
        if given_ids.size != given.size or given_ids.size == 0:
            return out
        order = np.argsort(given_ids)
        at = np.searchsorted(given_ids[order], query_ids).clip(0, given_ids.size - 1)
        known = given_ids[order][at] == query_ids
        out[known] = given[order][at][known]
        return out


class EstimateSize(Metric):
    """Number of domain items the estimate covers (an oracle: d; Blender: its head-list size).

    [A17]'s figures drop a curve's points where the head list did not reach its target size; this
    metric lets a leaderboard show where that happens.
    """

    name = "estimate-size"
    greater_is_better = True

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        return float(truth.d if estimate.items is None else np.asarray(estimate.items).size)


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(NDCG)
    registry.register(EstimateSize)
