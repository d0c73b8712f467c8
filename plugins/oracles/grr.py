"""Generalized randomized response (GRR, k-RR, direct encoding) ([W17]; [W20] §III-A, Eq. 1).

A user holding ``v`` reports ``y = v`` with probability ``p = e^eps / (e^eps + d - 1)`` and every
other value with probability ``q = 1 / (e^eps + d - 1)``; ``Support(y) = {y}`` so ``p* = p`` and
``q* = q`` (docs/algorithms.md §1.2). Reports take finitely many values, so GRR also exposes its channel
``P(y | x)`` and report histogram for EM ([MHS18]).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Channel, ChannelTags, Oracle, OracleTags

from ._common import as_counts, as_items, check_domain, check_epsilon, exp_neg


def mixture_histograms(counts: np.ndarray, rho: float, rng: np.random.Generator) -> np.ndarray:
    """GRR report histograms by the mixture shortcut (docs/algorithms.md §1.3), exact in distribution.

    ``k_v ~ Binomial(n_v, rho)`` users report the truth; the other ``U = n - sum(k)`` report a value
    uniform on all of D, drawn as one ``Multinomial(U, uniform)`` (a bincount of U draws when U is
    small — the same law). ``counts`` may be ``(..., d)``: independent populations.
    """
    counts = np.asarray(counts, dtype=np.int64)
    d = counts.shape[-1]
    kept = rng.binomial(counts, rho)
    rest = counts.sum(axis=-1) - kept.sum(axis=-1)
    if counts.ndim == 1 and rest < 4 * d:
        uniform = np.bincount(rng.integers(0, d, size=int(rest)), minlength=d)
    else:
        uniform = rng.multinomial(rest, np.full(d, 1.0 / d))
    return (kept + uniform).astype(np.int64)


class GRRChannel(Channel):
    """``P(y | x) = q + (p - q) [x = y]`` as an O(d) operator (for EM).

    ``forward(theta) = q * sum(theta) + (p - q) * theta`` and, the matrix being symmetric,
    ``backward`` is the same map. Works along axis 0, so a ``(d, m)`` block of vectors is fine.
    """

    def __init__(self, d: int, p: float, q: float):
        self.n_items = self.n_reports = int(d)
        self.p, self.q = float(p), float(q)

    def forward(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        return self.q * theta.sum(axis=0) + (self.p - self.q) * theta

    def backward(self, w: np.ndarray) -> np.ndarray:
        return self.forward(w)

    def tags(self) -> ChannelTags:
        return ChannelTags(randomized_response=(self.p, self.q))


class GRR(Oracle):
    """Generalized randomized response: report the true value w.p. e^eps/(e^eps+d-1), else another.

    - **Per-user path** (:meth:`perturb`): keep w.p. ``p``, otherwise report ``v + U{1..d-1} mod d``
      (uniform on the other values); reports are item indices; ``support_counts`` is a bincount.
    - **Aggregate path** (:meth:`sample_support_counts`, :meth:`sample_report_histogram`): the
      mixture shortcut of docs/algorithms.md §1.3, **exact in distribution** (same joint law of the
      whole count vector, not only of each count): GRR is "keep w.p. rho = p - q, else report a
      value uniform on all of D (possibly v itself)" because rho + (1 - rho)/d = p and
      (1 - rho)/d = q. So ``k_v ~ Binomial(n_v, rho)`` independent, ``U = n - sum(k)`` and
      ``c = k + Multinomial(U, uniform)``. Cost O(d).

    ``epsilon = inf`` is allowed (everyone reports the truth: p* = 1, q* = 0), for the ε = ∞ users
    of [MHS18]'s personalized budgets. Reduces to binary randomized response for d = 2.
    """

    name = "grr"
    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name, minimum=2)
        self.epsilon = check_epsilon(epsilon, self.name)
        t = exp_neg(self.epsilon)  # p = 1 / (1 + (d-1) t), q = t p
        self._p = 1.0 / (1.0 + (self.d - 1) * t)
        self._q = t * self._p

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    def tags(self) -> OracleTags:
        # A report supports exactly the value reported: Bernoulli(p) for the held item, q otherwise.
        return dataclasses.replace(super().tags(), bernoulli_support=True)

    @property
    def keep_probability(self) -> float:
        """rho = p - q = (e^eps - 1)/(e^eps + d - 1): the weight of "report the truth" in the mixture."""
        return self._p - self._q

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports (item indices) of users holding ``values``; O(m) for m users."""
        v = as_items(values, self.d)
        keep = rng.random(v.size) < self._p
        shift = rng.integers(1, self.d, size=v.size)
        return self._report(v, keep, shift)

    def _report(self, v: np.ndarray, keep: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """The sampler as a function of its random inputs (also enumerated by ``output_table``)."""
        return np.where(keep, v, (v + shift) % self.d)

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        return self.report_histogram(reports)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.sample_report_histogram(true_counts, rng)

    # -- finite output space --------------------------------------------------------------------
    def channel(self) -> GRRChannel:
        return GRRChannel(self.d, self._p, self._q)

    def report_histogram(self, reports: np.ndarray) -> np.ndarray:
        y = np.asarray(reports, dtype=np.int64)
        return np.bincount(y, minlength=self.d).astype(np.int64)

    def sample_report_histogram(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return mixture_histograms(as_counts(true_counts, self.d), self.keep_probability, rng)

    def support_counts_from_histogram(self, histogram: np.ndarray) -> np.ndarray:
        return np.asarray(histogram, dtype=np.int64).copy()

    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``P[y, v]`` enumerated from the sampler itself: keep (prob p) or each shift (prob (1-p)/(d-1))."""
        d = self.d
        P = np.zeros((d, d))
        items = np.arange(d)
        P[self._report(items, np.ones(d, bool), np.ones(d, np.int64)), items] += self._p
        for shift in range(1, d):
            P[self._report(items, np.zeros(d, bool), np.full(d, shift)), items] += (1 - self._p) / (d - 1)
        return P, np.eye(d, dtype=bool)

    def output_rows(self, reports: np.ndarray) -> np.ndarray:
        """Row of :meth:`output_table` of each report (the report itself)."""
        return np.asarray(reports, dtype=np.int64)

    def support_matrix(self, reports: np.ndarray) -> np.ndarray:
        """``(n_users, d)`` bools: a GRR report supports exactly the value reported."""
        y = np.asarray(reports, dtype=np.int64)
        out = np.zeros((y.size, self.d), dtype=bool)
        out[np.arange(y.size), y] = True
        return out


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(GRR)
