"""Blender's head list: its creation from opt-in users, and its (query, URL) slot layout.

[A17] Avent, Korolova, Zeber, Hovden, Livshits, "Blender: Enabling Local Search with a Hybrid
Differential Privacy Model", USENIX Security 2017, Fig. 3 (CreateHeadList), with the epsilons that
the extracted text lost restored as in algorithms.md §5.1.

A head list is a map query -> URLs. Here a record is an index into the population's domain and its
query is ``parents[record]``; the wildcards are not records of the population: every head-list
query gets a wildcard URL ``<q, *>`` and the wildcard query ``<*, *>`` stands for every query not in
the list (Fig. 5 lines 1-3). The client side works on **slots**: one slot per head-list record,
one ``<q, *>`` slot per head-list query and one ``<*, *>`` slot, laid out query by query.
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
    ``tau = 1 - 2 ln(delta) / eps``; ``tau(4, 1e-5) = 6.75646`` (acceptance A14).
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

    :param records: population record indices in the list (wildcards excluded), in list order.
    :param record_query: for each record, the index of its query in :attr:`queries`.
    :param queries: population parent indices of the list's queries (``<*, *>`` excluded), ordered
        by first appearance in :attr:`records`.

    Query ``j`` (``0 <= j < k - 1``) has ``k_q[j] = (its records) + 1`` URL slots, its records in
    list order and then ``<q, *>``; the last query ``j = k - 1`` is ``<*, *>`` with one slot.
    """

    records: np.ndarray
    record_query: np.ndarray
    queries: np.ndarray

    @classmethod
    def build(cls, records: np.ndarray, parents: np.ndarray) -> HeadList:
        records = np.asarray(records, dtype=np.int64)
        record_parents = np.asarray(parents, dtype=np.int64)[records]
        uniq, first, inverse = np.unique(record_parents, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # queries by first appearance in the list
        position = np.empty(uniq.size, dtype=np.int64)
        position[order] = np.arange(uniq.size)
        return cls(records=records, record_query=position[inverse.reshape(-1)], queries=uniq[order])

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of records (wildcards excluded): the head-list size of [A17]'s figures."""
        return int(self.records.size)

    @property
    def k(self) -> int:
        """Number of queries including ``<*, *>``."""
        return int(self.queries.size) + 1

    @cached_property
    def url_counts(self) -> np.ndarray:
        """``k_q`` for every query (URLs including ``<q, *>``; 1 for ``<*, *>``)."""
        per_query = np.bincount(self.record_query, minlength=self.k - 1) + 1
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
        """Slot of each record of :attr:`records` (records of a query keep their list order)."""
        order = np.argsort(self.record_query, kind="stable")
        per_query = self.url_counts[:-1] - 1
        group_start = np.concatenate([[0], np.cumsum(per_query)[:-1]]).astype(np.int64)
        rank = np.empty(self.size, dtype=np.int64)
        rank[order] = np.arange(self.size) - group_start[self.record_query[order]]
        return self.offsets[self.record_query] + rank

    @cached_property
    def star_url_slots(self) -> np.ndarray:
        """Slot of ``<q, *>`` for every head-list query (``<*, *>`` excluded)."""
        return (self.offsets + self.url_counts - 1)[:-1]

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
