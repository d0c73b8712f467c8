"""Unary encoding, the machinery OUE and SUE share (private) ([W17] §4.3).

A user holding ``v`` one-hot encodes it into ``d`` bits and perturbs every bit independently: the
own bit is 1 w.p. ``p``, every other bit w.p. ``q``. ``Support`` = the positions of the ones, so
``p* = p`` and ``q* = q``. The ``eps``-LDP condition ([W17] §4.3) is
``p (1 - q) / ((1 - p) q) = e^eps``; the two built-in choices of ``(p, q)`` are the only difference
between OUE (``p = 1/2``) and SUE (``p + q = 1``), so everything else lives here.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldpbench.types import Oracle, OracleTags

from ._common import as_counts, as_items, check_domain, check_epsilon, independent_binomials

#: Budget of expected (user, position) pairs per chunk of the per-user path.
_PAIRS_PER_CHUNK = 1 << 22
#: Above this q, Bernoulli positions come from one uniform per position (timed: a geometric draw
#: costs about as much as five uniforms), in blocks of _DENSE_BLOCK positions.
_DENSE_ABOVE = 0.2
_DENSE_BLOCK = 1 << 20
#: ``output_table`` enumerates all 2^d bit vectors up to this d.
_TABLE_MAX_D = 16


@dataclass(frozen=True)
class UnaryReports:
    """A chunk of unary-encoding reports in sparse form: report ``u`` has ones at ``item[user == u]``.

    ``n_users`` users; the pairs ``(user, item)`` are distinct and sorted by user, then item, so
    that nothing but the set of ones reaches the aggregator (a report listing the own item first
    would reveal it). What a client sends is its sorted item list (:func:`encode_unary`).
    """

    n_users: int
    user: np.ndarray
    item: np.ndarray

    def dense(self, d: int) -> np.ndarray:
        """The ``(n_users, d)`` bit matrix (small chunks only)."""
        bits = np.zeros((self.n_users, d), dtype=bool)
        bits[self.user, self.item] = True
        return bits


def encode_unary(reports: UnaryReports, n_users: int) -> np.ndarray:
    """What each client sends: the number of its ones (int64), then their items (int64) in the order
    the chunk holds them (not re-sorted: the audit judges what ``perturb`` produced), then zeros.
    ``(n_users, 8 (1 + max ones))`` ``uint8``, vectorized over the pairs."""
    if reports.n_users != n_users:
        raise ValueError(f"a chunk of {reports.n_users} unary reports encoded as {n_users} users")
    user = np.asarray(reports.user, dtype=np.int64)
    item = np.asarray(reports.item, dtype=np.int64)
    ones = np.bincount(user, minlength=n_users)
    order = np.argsort(user, kind="stable")  # stable: each user's items keep their order
    start = np.concatenate([[0], np.cumsum(ones)[:-1]]) if n_users else ones
    rank = np.arange(user.size) - start[user[order]]
    words = np.zeros((n_users, 1 + (int(ones.max()) if n_users else 0)), dtype=np.int64)
    words[:, 0] = ones
    words[user[order], 1 + rank] = item[order]
    return words.astype("<i8", copy=False).view(np.uint8).reshape(n_users, -1)


def bernoulli_positions(length: int, q: float, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions of the ones among ``length`` i.i.d. Bernoulli(q) trials.

    For small q, in O(length * q): the gaps between consecutive ones of a Bernoulli process are
    i.i.d. Geometric(q) (counting the trial that succeeds), so cumulative sums of geometric draws
    give the ones exactly; draws that land beyond ``length`` are discarded (the process is
    memoryless, so this does not bias the ones inside). For q above :data:`_DENSE_ABOVE` a uniform
    per position is cheaper than a geometric per one; it is drawn in blocks to bound memory.
    """
    if length <= 0 or q <= 0:
        return np.zeros(0, dtype=np.int64)
    if q >= 1:
        return np.arange(length, dtype=np.int64)
    parts = []
    if q > _DENSE_ABOVE:
        for start in range(0, length, _DENSE_BLOCK):
            block = min(_DENSE_BLOCK, length - start)
            parts.append(np.flatnonzero(rng.random(block) < q) + start)
        return np.concatenate(parts)
    start = 0
    while start < length:
        expected = (length - start) * q
        batch = int(expected + 6 * math.sqrt(expected) + 16)
        pos = start - 1 + np.cumsum(rng.geometric(q, size=batch))
        if pos[-1] >= length:
            parts.append(pos[pos < length])
            break
        parts.append(pos)
        start = int(pos[-1]) + 1
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


class UnaryEncoding(Oracle):
    """One-hot encode, then keep the own bit w.p. ``p`` and set each other bit w.p. ``q``.

    Subclasses give ``(p, q)`` through :meth:`bit_probabilities` and nothing else.

    - **Per-user path**: reports are sparse (:class:`UnaryReports`), so memory is O(m + sum K_u) for
      a chunk of m users instead of O(m d): the own bit is kept w.p. p and the other d - 1 bits
      are i.i.d. Bernoulli(q), i.e. K_u ~ Binomial(d - 1, q) ones at uniformly random distinct
      positions. They are drawn for the whole chunk at once as the ones of one Bernoulli process
      over the concatenated ``m (d - 1)`` "other" positions (:func:`bernoulli_positions`) — the
      same law, exactly, at cost O(m d q). ``chunk_users`` keeps a chunk near 4M pairs.
    - **Aggregate path**: ``c_v ~ Binomial(n_v, p) + Binomial(n - n_v, q)`` independently over v,
      **exact in distribution** (every bit is independent given the inputs). O(d).
    """

    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        self._p, self._q = self.bit_probabilities(self.epsilon)

    @classmethod
    def bit_probabilities(cls, epsilon: float) -> tuple[float, float]:
        """``(p, q)``: P(own bit = 1) and P(other bit = 1) at budget ``epsilon`` (may be ``inf``)."""
        raise NotImplementedError(f"{cls.__name__} must give its bit probabilities")

    def tags(self) -> OracleTags:
        # Each bit of a report is independent across users: the user's own bit is 1 w.p. p*, every
        # other bit w.p. q* (ibu's per-item likelihood applies).
        return dataclasses.replace(super().tags(), bernoulli_support=True)

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    @property
    def chunk_users(self) -> int:
        """Users per chunk on the per-user path: about 4M expected (user, position) pairs."""
        per_user = self._p + (self.d - 1) * self._q
        return int(min(1 << 20, max(1, _PAIRS_PER_CHUNK // max(1, math.ceil(per_user)))))

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> UnaryReports:
        v = as_items(values, self.d)
        m = v.size
        own = np.flatnonzero(rng.random(m) < self._p)
        # Ones among the "other" positions: position j of user u stands for item j + (j >= v_u).
        pos = bernoulli_positions(m * (self.d - 1), self._q, rng)
        user, slot = np.divmod(pos, max(1, self.d - 1))
        item = slot + (slot >= v[user])
        # Canonical order: the other ones come sorted by (user, item) (pos is sorted and item grows
        # with slot); each kept own one is inserted before its user's first other slot j >= v_u
        # (item j + 1 > v_u), so a report never lists its own item first (that order named it).
        at = np.searchsorted(pos, own * max(1, self.d - 1) + v[own])
        return UnaryReports(
            n_users=m,
            user=np.insert(user, at, own).astype(np.int64, copy=False),
            item=np.insert(item, at, v[own]).astype(np.int64, copy=False),
        )

    def encode_reports(self, reports: UnaryReports, n_users: int) -> np.ndarray:
        """Each user's item list as held (:func:`encode_unary`)."""
        return encode_unary(reports, n_users)

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: UnaryReports) -> np.ndarray:
        return np.bincount(reports.item, minlength=self.d).astype(np.int64)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return independent_binomials(as_counts(true_counts, self.d), self._p, self._q, rng)

    # -- exact audit ------------------------------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """All ``2^d`` bit vectors (row index = sum of bit_v 2^v); P = product of per-bit probabilities."""
        if self.d > _TABLE_MAX_D:
            raise ValueError(
                f"{self.name} output table has 2^d rows; d={self.d} is too large to enumerate (max {_TABLE_MAX_D})"
            )
        rows = np.arange(1 << self.d)
        S = ((rows[:, None] >> np.arange(self.d)[None, :]) & 1).astype(bool)
        P = np.ones((rows.size, self.d))
        for v in range(self.d):
            bit_prob = np.where(np.arange(self.d) == v, self._p, self._q)  # P(bit w = 1 | v)
            P[:, v] = np.prod(np.where(S, bit_prob, 1 - bit_prob), axis=1)
        return P, S

    def output_rows(self, reports: UnaryReports) -> np.ndarray:
        """Row of :meth:`output_table` of each report: its bit vector read as a binary number."""
        rows = np.zeros(reports.n_users, dtype=np.int64)
        np.add.at(rows, reports.user, np.left_shift(1, reports.item))
        return rows

    def support_matrix(self, reports: UnaryReports) -> np.ndarray:
        """``(n_users, d)`` bools: the users' bit vectors."""
        return reports.dense(self.d)
