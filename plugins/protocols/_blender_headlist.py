"""Blender's head list: its creation from opt-in users, and its (query, URL) slot layout.

[A17] Avent, Korolova, Zeber, Hovden, Livshits, "Blender: Enabling Local Search with a Hybrid
Differential Privacy Model", USENIX Security 2017, Fig. 3 (CreateHeadList), with the epsilons that
the extracted text lost restored as in docs/algorithms.md §5.1.

A head list is a map query -> URLs. Here a record is an index into the population's domain and its
query is ``parents[record]``. Every head-list query gets a wildcard URL ``<q, *>`` and the wildcard
query ``<*, *>`` stands for every query not in the list (Fig. 5 lines 1-3). The client side works on
**slots**: one slot per head-list record with a real URL, one ``<q, *>`` slot per head-list query
and one ``<*, *>`` slot, laid out query by query.

A record may itself be a query's wildcard record ``(q, *)``: the data of a query-only population
(a query log without clicks, such as aol-queries) are records ``(q, *)`` ([A17] §4 treats a record
as a (query, URL) pair; a query without a URL is ``u = *``, Fig. 6 lines 10-11). CreateHeadList then
adds ``*`` to ``HL[q]`` (Fig. 3 line 13), and EstimateClientProbabilities' "append ``*`` to every
``HL[q]``" (Fig. 5 line 3) adds nothing new: such a record **is** the ``<q, *>`` slot. A query whose
only listed record is ``(q, *)`` has ``k_q = 1`` URL slot, ``t_q = 1`` (the URL stage cannot lie),
and its record estimate is its query estimate (the case ``q = *`` of docs/algorithms.md §5.4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ldpbench.errors import ParamError


def laplace_scale(epsilon: float, m_o: int = 1) -> float:
    """``b = 2 m_O / eps``: a user changing her <= m_O records moves the count vector by <= 2 m_O in L1."""
    return 2.0 * m_o / epsilon


def threshold(epsilon: float, delta: float, m_o: int = 1) -> float:
    """CreateHeadList's threshold ``tau = b_S (ln(exp(eps/2) + m_O - 1) - ln delta)`` ([A17] Fig. 3 l. 7).

    Raises :class:`ParamError` when ``tau < 1`` (Fig. 3 l. 8). For ``m_O = 1``,
    ``tau = 1 - 2 ln(delta) / eps``; ``tau(4, 1e-5) = 6.75646`` (docs/algorithms.md §8.1).
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ParamError(f"Blender needs a finite epsilon > 0, got {epsilon}", "epsilon")
    if not 0 < delta < 1:
        raise ParamError(f"Blender needs 0 < delta < 1, got {delta}", "delta")
    # ln(e^{eps/2} + m - 1) written so that a large epsilon cannot overflow exp.
    log_term = epsilon / 2 + math.log1p((m_o - 1) * math.exp(-epsilon / 2))
    tau = laplace_scale(epsilon, m_o) * (log_term - math.log(delta))
    if tau < 1:
        raise ParamError(f"CreateHeadList threshold tau = {tau:.4g} < 1 (eps={epsilon}, delta={delta}, m_o={m_o})")
    return tau


def create_head_list(
    s_counts: np.ndarray, epsilon: float, delta: float, m_o: int, rng: np.random.Generator
) -> np.ndarray:
    """CreateHeadList(eps, delta, S, m_O) ([A17] Fig. 3): records whose noisy count exceeds tau.

    :param s_counts: record counts of the head-list users S (length d).
    :returns: the record indices kept (ascending). Only records that occur in S are candidates:
        that is what delta pays for. The wildcard ``<*, *>`` is implicit (always present).
    """
    tau = threshold(epsilon, delta, m_o)
    s_counts = np.asarray(s_counts)
    present = np.flatnonzero(s_counts)
    noisy = s_counts[present] + rng.laplace(0.0, laplace_scale(epsilon, m_o), present.size)
    return present[noisy > tau]


@dataclass(frozen=True, eq=False)
class HeadList:
    """The finalized head list and its slot layout.

    :param records: population record indices in the list (``<*, *>`` excluded), in list order.
    :param record_query: for each record, the index of its query in :attr:`queries`.
    :param queries: population parent indices of the list's queries (``<*, *>`` excluded), ordered
        by first appearance in :attr:`records`.
    :param wildcard: for each record, whether it is its query's wildcard record ``(q, *)`` (at
        most one per query); ``None``: no record is.

    Query ``j`` (``0 <= j < k - 1``) has ``k_q[j] = (its records with a real URL) + 1`` URL slots,
    those records in list order and then ``<q, *>`` (the slot of its ``(q, *)`` record if listed);
    the last query ``j = k - 1`` is ``<*, *>`` with one slot.
    """

    records: np.ndarray
    record_query: np.ndarray
    queries: np.ndarray
    wildcard: np.ndarray | None = None

    @classmethod
    def build(cls, records: np.ndarray, parents: np.ndarray, wildcard: np.ndarray | bool | None = None) -> HeadList:
        """The head list of ``records`` (list order) under ``parents`` (record -> query).

        :param wildcard: which records are ``(q, *)`` records: a boolean per record, or one boolean
            for all of them (``True`` for a query-only population).
        """
        records = np.asarray(records, dtype=np.int64)
        record_parents = np.asarray(parents, dtype=np.int64)[records]
        uniq, first, inverse = np.unique(record_parents, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # queries by first appearance in the list
        position = np.empty(uniq.size, dtype=np.int64)
        position[order] = np.arange(uniq.size)
        record_query = position[inverse.reshape(-1)]
        mask = None
        if wildcard is not None:
            mask = np.broadcast_to(np.asarray(wildcard, dtype=bool), records.shape).copy()
            if np.any(np.bincount(record_query[mask], minlength=uniq.size) > 1):
                raise ValueError("a query has more than one wildcard record (q, *) in the head list")
            if not mask.any():
                mask = None
        return cls(records=records, record_query=record_query, queries=uniq[order], wildcard=mask)

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of records (``<*, *>`` excluded): the head-list size of [A17]'s figures."""
        return int(self.records.size)

    @cached_property
    def _url_records(self) -> np.ndarray:
        """Whether each record has a slot of its own (a real URL, not ``(q, *)``)."""
        return np.ones(self.size, dtype=bool) if self.wildcard is None else ~self.wildcard

    @property
    def k(self) -> int:
        """Number of queries including ``<*, *>``."""
        return int(self.queries.size) + 1

    @cached_property
    def url_counts(self) -> np.ndarray:
        """``k_q`` for every query (URLs including ``<q, *>``; 1 for ``<*, *>``)."""
        per_query = np.bincount(self.record_query[self._url_records], minlength=self.k - 1) + 1
        return np.append(per_query, 1).astype(np.int64)

    @cached_property
    def offsets(self) -> np.ndarray:
        """First slot of every query."""
        return np.concatenate([[0], np.cumsum(self.url_counts)[:-1]]).astype(np.int64)

    @property
    def n_slots(self) -> int:
        return int(self.url_counts.sum())

    @cached_property
    def query_of_slot(self) -> np.ndarray:
        return np.repeat(np.arange(self.k), self.url_counts)

    @cached_property
    def record_slots(self) -> np.ndarray:
        """Slot of each record of :attr:`records` (records of a query keep their list order; a
        ``(q, *)`` record is its query's ``<q, *>`` slot)."""
        real = np.flatnonzero(self._url_records)
        rq = self.record_query[real]
        order = np.argsort(rq, kind="stable")
        per_query = self.url_counts[:-1] - 1
        group_start = np.concatenate([[0], np.cumsum(per_query)[:-1]]).astype(np.int64)
        rank = np.empty(real.size, dtype=np.int64)
        rank[order] = np.arange(real.size) - group_start[rq[order]]
        out = self.star_url_slots[self.record_query]  # (q, *) records
        out[real] = self.offsets[rq] + rank
        return out

    @cached_property
    def star_url_slots(self) -> np.ndarray:
        """Slot of ``<q, *>`` for every head-list query (``<*, *>`` excluded)."""
        return (self.offsets + self.url_counts - 1)[:-1]

    @cached_property
    def outside_slots(self) -> np.ndarray:
        """The slots that stand for records outside the list: every ``<q, *>`` that is not a
        listed ``(q, *)`` record, and ``<*, *>`` (last)."""
        free = np.ones(self.k - 1, dtype=bool)
        if self.wildcard is not None:
            free[self.record_query[self.wildcard]] = False
        return np.append(self.star_url_slots[free], self.star_slot)

    @property
    def star_slot(self) -> int:
        """Slot of ``<*, *>`` (the last one)."""
        return self.n_slots - 1

    def slot_of(self, parents: np.ndarray) -> np.ndarray:
        """The slot every population record maps to (Fig. 6 lines 8-11).

        A record in the list keeps its slot; a record whose query is in the list maps to that
        query's ``<q, *>``; any other record maps to ``<*, *>``.
        """
        parents = np.asarray(parents, dtype=np.int64)
        n_parents = int(parents.max()) + 1 if parents.size else 0
        if self.queries.size:
            n_parents = max(n_parents, int(self.queries.max()) + 1)
        star_of_parent = np.full(n_parents, self.star_slot, dtype=np.int64)
        star_of_parent[self.queries] = self.star_url_slots
        out = star_of_parent[parents]
        out[self.records] = self.record_slots
        return out
