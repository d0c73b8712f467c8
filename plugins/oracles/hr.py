"""Hadamard Response (HR), high-privacy form ([ASZ19] §4 and their ``k2k_hadamard.py``; [W20] §III-C;
docs/algorithms.md §1.2).

``K`` = the smallest power of two >= d + 1; value v uses row ``r = v + 1`` of the Sylvester matrix
``H_K`` (row 0, all ones, is skipped); ``C_v = {y : H_K[r, y] = +1}``. A user reports y uniform on
``C_v`` w.p. ``e^eps/(e^eps+1)``, else uniform on the complement: ``P(y | v)`` is ``2e^eps/(K(e^eps+1))``
on ``C_v`` and ``2/(K(e^eps+1))`` off it (ratio e^eps). ``Support(y) = {v : y in C_v}``; since
``|C_v| = K/2`` and ``|C_v ∩ C_w| = K/4``, ``p* = e^eps/(e^eps+1)`` and ``q* = 1/2`` exactly — the
constants of OLH with g = 2, with O(log K)-bit reports and O(n + K log K) aggregation.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Channel, Oracle, OracleTags

from . import _hadamard
from ._common import as_counts, as_items, check_domain, check_epsilon, exp_neg
from ._fwht import fwht


def hadamard_size(d: int) -> int:
    """``K = 2^ceil(log2(d + 1))``: room for rows 1..d."""
    return 1 << max(1, math.ceil(math.log2(d + 1)))


class HRChannel(Channel):
    """``P(y | v) = 1/K + delta/K * H_K[v + 1, y]`` with ``delta = (e^eps - 1)/(e^eps + 1)``, via FWHT.

    ``forward(theta)[y] = sum(theta)/K + delta/K * FWHT(theta padded to rows 1..d)[y]`` and
    ``backward(w)[v] = sum(w)/K + delta/K * FWHT(w)[v + 1]`` (H_K is symmetric): O(K log K) each.
    Small channels (K d <= 2^16) keep the dense matrix instead: a matrix product is faster than
    log K NumPy passes there, and EM calls these maps thousands of times.
    """

    _DENSE_MAX = 1 << 16

    def __init__(self, d: int, size: int, delta: float):
        self.n_items, self.n_reports = int(d), int(size)
        self.delta = float(delta)
        self._matrix = None
        if self.n_items * self.n_reports <= self._DENSE_MAX:
            rows = fwht(np.eye(self.n_reports)[1 : self.n_items + 1])  # H_K[v + 1, :]
            self._matrix = (1.0 + self.delta * rows.T) / self.n_reports

    def forward(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        if self._matrix is not None:
            return self._matrix @ theta
        padded = np.zeros((self.n_reports,) + theta.shape[1:])
        padded[1 : self.n_items + 1] = theta
        transformed = np.moveaxis(fwht(np.moveaxis(padded, 0, -1)), -1, 0)
        return (theta.sum(axis=0) + self.delta * transformed) / self.n_reports

    def backward(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if self._matrix is not None:
            return self._matrix.T @ w
        transformed = np.moveaxis(fwht(np.moveaxis(w, 0, -1)), -1, 0)
        return (w.sum(axis=0) + self.delta * transformed[1 : self.n_items + 1]) / self.n_reports


class HR(Oracle):
    """Hadamard Response: report a point of the item's Hadamard coset, aggregate with an FWHT.

    - **Per-user path**: the parity-flip sampler (O(1) per user, ``np.bitwise_count``); reports are
      ints in [0, K). Aggregation: histogram ``N`` (length K), ``S = FWHT(N)``,
      ``c_v = (n + S[v + 1]) / 2`` — exact integers ([ASZ19]).
    - **Aggregate path** (:meth:`sample_report_histogram`): the report histogram drawn **exactly in
      distribution** in O((d + K) log K) time, independent of n, by splitting counts bit by bit
      (the argument is in :mod:`._hadamard`); for small n the per-user sampler is cheaper and is
      used instead (same law). No independent-binomial shortcut is used: HR's support counts are
      correlated across values.

    ``epsilon = inf`` is allowed (p* = 1; the report is uniform on C_v).
    """

    name = "hr"
    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        #: number of outputs K (a power of two >= d + 1) and its log
        self.size = hadamard_size(self.d)
        self.bits = self.size.bit_length() - 1
        t = exp_neg(self.epsilon)
        self._p = 1.0 / (1.0 + t)  # e^eps / (e^eps + 1)

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return 0.5

    def tags(self) -> OracleTags:
        # y supports v when y is in C_v: w.p. p* for the held value, exactly 1/2 for any other
        # (|C_v ∩ C_w| = K/4), independently across users. ibu prefers the channel when the
        # estimate carries the report histogram (both paths do); this is the fallback.
        return dataclasses.replace(super().tags(), bernoulli_support=True)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _hadamard.per_user_reports(as_items(values, self.d), self.bits, self._p, rng)

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        return self.support_counts_from_histogram(self.report_histogram(reports))

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.support_counts_from_histogram(self.sample_report_histogram(true_counts, rng))

    # -- finite output space --------------------------------------------------------------------
    def channel(self) -> HRChannel:
        return HRChannel(self.d, self.size, 2 * self._p - 1)

    def report_histogram(self, reports: np.ndarray) -> np.ndarray:
        return np.bincount(np.asarray(reports, dtype=np.int64), minlength=self.size).astype(np.int64)

    def sample_report_histogram(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(true_counts, self.d)
        n = int(counts.sum())
        if _hadamard.use_per_user(n, self.d, self.bits):
            values = np.repeat(np.arange(self.d), counts)
            return self.report_histogram(_hadamard.per_user_reports(values, self.bits, self._p, rng))
        return _hadamard.exact_histograms(counts, self.bits, self._p, rng)

    def support_counts_from_histogram(self, histogram: np.ndarray) -> np.ndarray:
        """``c_v = (n + S[v + 1]) / 2`` with ``S = FWHT(histogram)`` (exact integer arithmetic)."""
        hist = np.asarray(histogram, dtype=np.int64)
        transformed = fwht(hist)
        return (int(hist.sum()) + transformed[1 : self.d + 1]) // 2

    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``P[y, v]`` (K x d) enumerated from the sampler: every u (prob 1/K) times inside/outside."""
        K, d = self.size, self.d
        P = np.zeros((K, d))
        u = np.arange(K)
        for v in range(d):
            r = np.full(K, v + 1)
            np.add.at(P[:, v], _hadamard.hr_output(r, u, np.ones(K, bool)), self._p / K)
            np.add.at(P[:, v], _hadamard.hr_output(r, u, np.zeros(K, bool)), (1 - self._p) / K)
        y = np.arange(K)
        S = (np.bitwise_count(np.arange(1, d + 1)[None, :] & y[:, None]) & 1) == 0
        return P, S

    def output_rows(self, reports: np.ndarray) -> np.ndarray:
        """Row of :meth:`output_table` of each report (the report itself)."""
        return np.asarray(reports, dtype=np.int64)

    def support_matrix(self, reports: np.ndarray) -> np.ndarray:
        """``(n_users, d)`` bools: report y supports v iff ``H_K[v + 1, y] = +1`` (even parity of ``(v+1) & y``)."""
        y = np.asarray(reports, dtype=np.int64)
        rows = np.arange(1, self.d + 1, dtype=np.int64)
        return (np.bitwise_count(rows[None, :] & y[:, None]) & 1) == 0


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(HR)
