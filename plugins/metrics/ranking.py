"""Ranking quality: NDCG@k, flat and [A17]'s list of lists; and the size of the ranked list.

NDCG ([A17] §4.1; docs/algorithms.md §6.5): the relevance of an item is its **true share** of the
evaluated universe (the items the estimate covers: the whole domain for an oracle, the head-list
records for Blender, rescaled to sum to 1 once the wildcard is removed). Items are ranked by the
estimate (ties: see below), and

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

Ties (``ties``) — a departure from docs/algorithms.md §6.5, which breaks ties "by item id
(deterministic)". Tied estimates are common: after the simplex projection most of Blender's client
record estimates are exactly 0 at eps 1-2, and Norm-Sub or Base-Cut zero out much of an oracle's
vector. Any fixed order of the tied items then ranks them by something that is not the estimate,
and here every such order leaks the truth: the shipped and synthetic datasets number their items
by popularity (item id order is the true order), and Blender's head list is in the opt-in group's
estimated order (position order would credit the client estimate with the opt-in ranking). So the
default, ``random``, breaks ties by a uniformly random order of the **domain** drawn from the
metric's ``rng``: the order depends on item ids only through that draw, so in a run (where the
engine seeds the metric stream by repeat and metric, the same for every mechanism and pipeline) all
methods of a repeat see the same tie order — reproducible and paired. ``item-id`` is the
reference's reading: ties by ``Estimate.items`` id, or by domain index for a full-domain estimate.
Queries are tied the same way (a random order of the query domain, or query id).

Ideal list (``ideal``). ``covered`` (the default, [A17] §4.1: "we discard the artificially added
queries and URLs and rescale rel_i") scores the estimate against the best ordering of the items it
covers: a head list that misses a truly popular record loses nothing for it. ``global`` scores it
against the true **global** top k: relevance is the true share of the whole domain (of all of a
query's records, for queries), and IDCG@k ranks the whole domain (all queries) by the truth, so a
true top item missing from the estimate costs its place in the ideal list. For list-of-lists the
outer level is global and the inner factor of IDCG^Q is one; the inner NDCG^q stay over the
covered URLs. For a full-domain estimate both are the same.

Query scores (``query_scores``): ``protocol`` uses the query-level estimates a protocol reports in
``Estimate.query_estimates`` (Blender's client and blended query estimates are not sums of their
record estimates, [A17] Fig. 9), as long as they still go with the estimate's record vector:
:meth:`~ldpbench.types.Estimate.current_query_estimates` returns them only while the estimate's
:meth:`~ldpbench.types.Estimate.frequencies_digest` is the one they were stored with (an identity
step such as ``base`` keeps them; a post-processor that changes the vector drops them). Otherwise,
and with ``sum``, a query's score is the sum of its records' estimates.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, Population

from ..datasets.synthetic import MAX_DOMAIN  # a top-k cut-off beyond any domain is a typo
from ._align import aligned_truth


def _gain(rel: np.ndarray) -> np.ndarray:
    return np.exp2(rel) - 1.0


def _discounts(m: int) -> np.ndarray:
    """``1 / log2(i + 1)`` for ranks ``i = 1..m``."""
    return 1.0 / np.log2(np.arange(2, m + 2))


def ranking(scores: np.ndarray, k: int | None = None, tie_key: np.ndarray | None = None) -> np.ndarray:
    """The first ``k`` positions (all if ``None``) by decreasing score, ties by increasing ``tie_key``.

    ``tie_key`` (one value per position; default: the position) should be distinct. O(d)
    selection of the k largest scores and of the tied ones at the boundary, then a sort of the
    ``k`` selected: many ties (an estimate that is mostly 0) cost no more than a few.
    """
    scores = np.asarray(scores, dtype=float)
    key = None if tie_key is None else np.asarray(tie_key)

    def key_of(positions: np.ndarray) -> np.ndarray:
        return positions if key is None else key[positions]

    if k is not None and k < scores.size:
        kth = np.partition(scores, scores.size - k)[scores.size - k]  # the k-th largest score
        above = np.flatnonzero(scores > kth)  # fewer than k of them: all are in
        tied = np.flatnonzero(scores == kth)
        need = k - above.size  # >= 1
        if tied.size > need:  # the boundary ties with the smallest keys take the last places
            tied = tied[np.argpartition(key_of(tied), need - 1)[:need]]
        chosen = np.concatenate([above, tied])
        return chosen[np.lexsort((key_of(chosen), -scores[chosen]))]
    return np.lexsort((key_of(np.arange(scores.size)), -scores))


def dcg(
    relevance: np.ndarray,
    scores: np.ndarray,
    k: int | None,
    factors: np.ndarray | None = None,
    tie_key: np.ndarray | None = None,
) -> float:
    """``sum_{i<=k} gain(rel of the item at rank i) / log2(i + 1) [* factor of that item]``."""
    order = ranking(scores, k, tie_key)
    terms = _gain(np.asarray(relevance, dtype=float)[order]) * _discounts(order.size)
    if factors is not None:
        terms = terms * np.asarray(factors, dtype=float)[order]
    return float(terms.sum())


def ndcg(relevance: np.ndarray, scores: np.ndarray, k: int | None = None, tie_key: np.ndarray | None = None) -> float:
    """Standard NDCG@k of ranking the items by ``scores``; ``nan`` if no item is relevant."""
    ideal = dcg(relevance, relevance, k, tie_key=tie_key)
    return dcg(relevance, scores, k, tie_key=tie_key) / ideal if ideal > 0 else float("nan")


def within_group_ndcg(
    group: np.ndarray,
    relevance: np.ndarray,
    scores: np.ndarray,
    k: int | None,
    tie_key: np.ndarray | None = None,
) -> np.ndarray:
    """NDCG@k of every group's own list (vectorized over groups); groups with no relevance get 1.

    :param group: group index (0..G-1) of every item; relevance is taken as given (shares within
        the group).
    :param tie_key: ties within a group by increasing key (default: position).
    """
    group = np.asarray(group, dtype=np.int64)
    n_groups = int(group.max()) + 1 if group.size else 0
    key = np.arange(group.size) if tie_key is None else np.asarray(tie_key)

    def per_group_dcg(score: np.ndarray) -> np.ndarray:
        order = np.lexsort((key, -score, group))  # by group, then decreasing score, then tie key
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


def all_or(ids: np.ndarray | None, d: int) -> np.ndarray:
    """``ids``, or the whole domain ``0..d-1`` for a full-domain estimate."""
    return np.arange(d) if ids is None else ids


def global_ndcg(
    relevance_all: np.ndarray,
    ids: np.ndarray,
    scores: np.ndarray,
    k: int | None,
    tie_key: np.ndarray | None = None,
    domain_tie_key: np.ndarray | None = None,
) -> float:
    """NDCG@k of ranking the items ``ids`` by ``scores`` against the true top k of the whole domain.

    ``relevance_all`` is the true share of every domain item; the items outside ``ids`` cannot be
    ranked, so a true top-k item the estimate misses leaves its ideal gain unmatched.
    """
    ideal = dcg(relevance_all, relevance_all, k, tie_key=domain_tie_key)
    actual = dcg(np.asarray(relevance_all)[ids], scores, k, tie_key=tie_key)
    return actual / ideal if ideal > 0 else float("nan")


class NDCG(Metric):
    """NDCG@k of the estimate's ranking: flat, of the queries, or [A17]'s list of lists."""

    name = "ndcg"
    greater_is_better = True
    # 2: ties broken at random by default (was: by position); protocol query estimates kept
    # through identity pipeline steps (was: dropped by any step).
    algorithm_version = "2"
    params = (
        Param("k", int, 10, "rank cut-off (null: the whole list)", min=1, max=MAX_DOMAIN, nullable=True),
        Param(
            "structure",
            str,
            "flat",
            "flat items, queries only, or list-of-lists (queries, then URLs)",
            choices=("flat", "queries", "list-of-lists"),
        ),
        Param(
            "ideal_inner",
            str,
            "one",
            "inner factor of IDCG^Q: one, or the estimated NDCG^q",
            choices=("one", "estimated"),
        ),
        Param(
            "query_scores",
            str,
            "protocol",
            "rank queries by the protocol's query estimates, or by sums",
            choices=("protocol", "sum"),
        ),
        Param(
            "ideal",
            str,
            "covered",
            "score against the best order of the covered items, or the true global top k (missing items penalized)",
            choices=("covered", "global"),
        ),
        Param(
            "ties",
            str,
            "random",
            "break ties in the estimate by a random order of the domain (from the metric's rng), or by item id",
            choices=("random", "item-id"),
        ),
    )

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        f = aligned_truth(truth, estimate)
        if f.size == 0 or not f.sum() > 0:
            return float("nan")  # an empty list (e.g. no head list) or nothing relevant
        rel = f / f.sum()
        scores = estimate.item_answers()
        items = None if estimate.items is None else np.asarray(estimate.items, dtype=np.int64)
        # Tie keys of the whole domain, then of its queries: drawn in this order whatever the
        # estimate covers, so every method scored with the same stream sees the same tie order.
        # (A full-domain estimate is in domain order: no gather needed, the domain keys are its.)
        domain_key = self._tie_keys(truth.d, rng)
        item_key = self._keys_of(domain_key, items)
        if self.structure == "flat":
            if self.ideal == "global":
                return global_ndcg(truth.frequencies, all_or(items, truth.d), scores, self.k, item_key, domain_key)
            return ndcg(rel, scores, self.k, item_key)

        all_items = np.arange(truth.d) if items is None else items
        if truth.parents is None:  # every item is its own query
            parents, query_domain_key = all_items, domain_key
        else:
            parents = np.asarray(truth.parents) if items is None else np.asarray(truth.parents)[items]
            n_labels = len(truth.parent_labels) if truth.parent_labels is not None else 0
            query_domain_key = self._tie_keys(max(n_labels, int(np.max(truth.parents, initial=-1)) + 1), rng)
        query_ids, group = np.unique(parents, return_inverse=True)
        group = group.reshape(-1)
        query_key = self._keys_of(query_domain_key, query_ids)
        if item_key is None:
            item_key = all_items
        rel_q = np.bincount(group, weights=rel, minlength=query_ids.size)
        score_q = self._query_scores(estimate, query_ids, group, scores)
        if self.ideal == "global":
            # every query's true share of the whole domain (all its records, listed or not)
            all_parents = np.arange(truth.d) if truth.parents is None else np.asarray(truth.parents)
            rel_q_all = np.bincount(all_parents, weights=truth.frequencies)
        if self.structure == "queries":
            if self.ideal == "global":
                return global_ndcg(rel_q_all, query_ids, score_q, self.k, query_key, query_domain_key)
            return ndcg(rel_q, score_q, self.k, query_key)

        # Inner NDCG^q only for the queries that can enter the top k of either ranking.
        needed = np.zeros(query_ids.size, dtype=bool)
        needed[ranking(score_q, self.k, query_key)] = True
        if self.ideal_inner == "estimated":
            needed[ranking(rel_q, self.k, query_key)] = True
        mine = needed[group]
        share = np.divide(rel, rel_q[group], out=np.zeros_like(rel), where=rel_q[group] > 0)[mine]
        sub_group = np.cumsum(needed)[group[mine]] - 1
        inner = np.ones(query_ids.size)
        inner[needed] = within_group_ndcg(sub_group, share, scores[mine], self.k, item_key[mine])
        if self.ideal == "global":
            ideal = dcg(rel_q_all, rel_q_all, self.k)
            actual = dcg(rel_q_all[query_ids], score_q, self.k, inner, query_key)
            return actual / ideal if ideal > 0 else float("nan")
        ideal_factors = inner if self.ideal_inner == "estimated" else None
        ideal = dcg(rel_q, rel_q, self.k, ideal_factors, query_key)
        return dcg(rel_q, score_q, self.k, inner, query_key) / ideal if ideal > 0 else float("nan")

    def _tie_keys(self, size: int, rng: np.random.Generator) -> np.ndarray | None:
        """A key per domain position (ties go to the smaller key); ``None``: the id itself.

        ``random``: i.i.d. uniform keys, i.e. a uniformly random order of the domain (5x cheaper
        than ``rng.permutation``; two equal doubles among d draws have probability ~d^2 / 2^54,
        below 1e-3 for d = 4 million, and are then ordered deterministically);
        ``item-id``: ``None``.
        """
        return rng.random(size) if self.ties == "random" else None

    @staticmethod
    def _keys_of(domain_key: np.ndarray | None, ids: np.ndarray | None) -> np.ndarray | None:
        """The tie keys of ``ids`` (``None``: the whole domain in order)."""
        if domain_key is None:
            return ids  # item-id: the ids are the keys (None: positions, which are the ids)
        return domain_key if ids is None else domain_key[ids]

    def _query_scores(
        self, estimate: Estimate, query_ids: np.ndarray, group: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        out = np.bincount(group, weights=scores, minlength=query_ids.size)
        # The protocol's query estimates go with one record vector: use them only while the
        # estimate still holds that vector (not name-based: any step that changes it drops them).
        current = estimate.current_query_estimates() if self.query_scores == "protocol" else None
        if current is None:
            return out
        given_ids = np.asarray(current.queries, dtype=np.int64)
        given = np.asarray(current.frequencies, dtype=float)
        if given_ids.size != given.size or given_ids.size == 0:
            return out
        given = estimate.answer(given)  # query-time post-processing (Post-Pos) acts on them too
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
