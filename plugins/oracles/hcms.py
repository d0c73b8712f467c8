"""Apple's Hadamard count-mean sketch (HCMS) ([Apple17]; [Pan24]; see :mod:`._sketch`).

A user holding v hashes it to a bucket ``b = h(v)`` of ``[0, m)`` (m a power of two), picks a
coefficient ``l`` uniform on ``[0, m)`` and sends the sign ``H_m[b, l]`` of the Sylvester-Hadamard
matrix, kept w.p. ``e^eps/(e^eps + 1)`` and flipped otherwise: one bit, eps-LDP (randomized
response on one sign). Support: ``{w : H_m[h(w), l] = sent sign}``. Two distinct rows agree on
exactly half the coefficients, so ``p* = e^eps/(e^eps + 1)`` and ``q* = p*/m + (m - 1)/(2m)``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import OracleTags

from . import _hadamard, _sketch
from ._common import as_counts, as_items
from ._fwht import fwht
from ._sketch import CountMeanSketch, SketchReports

#: Largest exact output table (rows).
_TABLE_ROWS = 1 << 16
#: Apple's family, aggregate path: up to this many users, draw their reports (same law, cheaper).
_PER_USER_UP_TO = 2048


def hadamard_sign(bucket: np.ndarray, coefficient: np.ndarray) -> np.ndarray:
    """``H_m[bucket, coefficient] == +1`` (even parity of ``bucket & coefficient``), elementwise."""
    return (np.bitwise_count(np.bitwise_and(bucket, coefficient)) & 1) == 0


class HCMS(CountMeanSketch):
    """Hadamard count-mean sketch: one Hadamard coefficient of the hashed bucket, sign kept w.p. e^eps/(e^eps+1).

    - **Per-user path**: faithful reports (a hash function, a coefficient and a sign per user).
      ``unbiased``: supports are read by hashing the domain per user in blocks (O(m_users d));
      ``apple``: through Apple's sketch, the sign sums per (function, coefficient), transformed back
      with an FWHT: ``c_w = (n + sum_j FWHT(D_j)[h_j(w)]) / 2``, exact integers, O(k m log m + k d).
    - **Aggregate path**, exact in distribution:

      - ``apple`` (given the family): the users of each item split over the k functions
        (multinomial); users of function j in bucket i send ``(l, sign)`` exactly as Hadamard Response
        over ``K = 2m`` outputs with row ``m + i`` (output ``l + m [sign = -1]``; ``H_2m[m + i, .]``
        is ``+1`` exactly where the sign equals ``H_m[i, l]``), so the (l, sign) histogram of each
        function is drawn by HR's exact splitting sampler (:mod:`._hadamard`), O(k m log m + k d);
        up to 2,048 users their reports are drawn instead (the same law, cheaper).
      - ``unbiased`` (w.r.t. the idealized protocol, a fully random function per user): a user with
        ``l = 0`` (w.p. 1/m; column 0 of H is all +1) supports every item or none, by her sign; a user
        with ``l != 0`` supports her own item w.p. p* and every other item independently w.p. 1/2 (a
        uniform bucket's row agrees with the sign w.p. exactly 1/2). So with per item
        ``L0_v ~ Bin(n_v, 1/m)``, ``A_v ~ Bin(L0_v, p*)``, ``own_v ~ Bin(n_v - L0_v, p*)``:
        ``c_w = own_w + sum_v A_v + Bin(R - (n_w - L0_w), 1/2)``, ``R = n - sum_v L0_v``, independent
        over w given these. O(d). With the real seeded hash each item's law is exact (to 2^-32 per
        bucket); cross-item independence is approximate, as for OLH.
    """

    name = "hcms"
    params = _sketch.sketch_params(default_m=1024)

    def __init__(self, d: int, epsilon: float, m: int = 1024, **params):
        super().__init__(d=d, epsilon=epsilon, m=m, **params)
        self._bits = self.buckets.bit_length() - 1

    def vote_probabilities(self) -> tuple[float, float]:
        return 1.0 / (1.0 + math.exp(-self.epsilon)), 0.5

    def tags(self) -> OracleTags:
        # With a hash function per user, a report supports an item through one bit: Bernoulli(p*) for
        # the user's own item, Bernoulli(q*) for any other. Apple's fixed family makes q* depend on
        # collisions, so ibu's per-item likelihood does not apply to it.
        return dataclasses.replace(
            super().tags(),
            output_table=self._enumerable,
            output_rows=self._enumerable,
            bernoulli_support=not self.fixed_family,
            unbiased=not self.fixed_family,  # Apple's estimator is biased given its family
        )

    @property
    def _enumerable(self) -> bool:
        """Whether :meth:`output_table` is small enough to enumerate (at most 65,536 rows, d <= 16)."""
        rows = self.functions * self.buckets * 2 if self.fixed_family else 2**self.d
        return self.d <= 16 and rows <= _TABLE_ROWS

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> SketchReports:
        v = as_items(values, self.d)
        seeds, function = self.draw_functions(v.size, rng)
        own = self.own_buckets(v, seeds, function)
        coefficient = rng.integers(0, self.buckets, size=v.size)
        keep = rng.random(v.size) < self._p
        sign = hadamard_sign(own, coefficient)
        return SketchReports(seeds=seeds, function=function, votes=sign == keep, coefficient=coefficient)

    # -- aggregator side ----------------------------------------------------------------------
    def support_matrix(self, reports: SketchReports) -> np.ndarray:
        """``(n_users, d)`` bools: ``H_m[h_u(w), l_u]`` equals the sent sign."""
        out = np.empty((reports.votes.shape[0], self.d), dtype=bool)
        for start, stop, buckets in self.bucket_blocks(reports):
            signs = hadamard_sign(buckets, reports.coefficient[start:stop, None])
            out[start:stop] = signs == reports.votes[start:stop, None]
        return out

    def support_counts(self, reports: SketchReports) -> np.ndarray:
        if self.fixed_family:
            cells = reports.function * self.buckets + reports.coefficient
            plus = np.bincount(cells[reports.votes], minlength=self.functions * self.buckets)
            minus = np.bincount(cells[~reports.votes], minlength=self.functions * self.buckets)
            return self._counts_from_signs((plus - minus).reshape(self.functions, self.buckets), reports.votes.size)
        counts = np.zeros(self.d, dtype=np.int64)
        for start, stop, buckets in self.bucket_blocks(reports):
            signs = hadamard_sign(buckets, reports.coefficient[start:stop, None])
            counts += (signs == reports.votes[start:stop, None]).sum(axis=0)
        return counts

    def _counts_from_signs(self, signs: np.ndarray, n: int) -> np.ndarray:
        """``c_w = (n + sum_j FWHT(D_j)[h_j(w)]) / 2`` from the signed sums ``D[j, l]`` (exact integers)."""
        transformed = fwht(signs.astype(np.int64))
        agree = transformed[np.arange(self.functions)[:, None], self.table].sum(axis=0)
        return (n + agree) // 2

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(true_counts, self.d)
        if self.fixed_family:
            return self._sample_fixed(counts, rng)
        m, p = self.buckets, self._p
        first = rng.binomial(counts, 1.0 / m)  # users who sent coefficient 0
        all_in = rng.binomial(first, p)
        rest = counts - first
        own = rng.binomial(rest, p)
        others = int(rest.sum()) - rest
        return own + int(all_in.sum()) + rng.binomial(others, 0.5)

    def _sample_fixed(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        k, m = self.functions, self.buckets
        n = int(counts.sum())
        if n <= _PER_USER_UP_TO:
            # few users: their reports are cheaper than the splitting sampler, and have the same law
            return self.support_counts(self.perturb(np.repeat(np.arange(self.d), counts), rng))
        per_function = rng.multinomial(counts, np.full(k, 1.0 / k))  # (d, k)
        rows = np.zeros((k, 2 * m - 1), dtype=np.int64)  # HR rows 1..2m-1; bucket i is row m + i
        for j in range(k):
            rows[j, m - 1 :] = np.bincount(self.table[j], weights=per_function[:, j], minlength=m)
        hist = _hadamard.exact_histograms(rows, self._bits + 1, self._p, rng)  # (k, 2m): l + m [sign -1]
        return self._counts_from_signs(hist[:, :m] - hist[:, m:], int(counts.sum()))

    # -- exact law (the audits) ---------------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``apple``: every report (j, l, sign), row ``(j m + l) 2 + [sign = +1]``. ``unbiased`` (the
        idealized protocol): reports merged by their support set z (row ``sum_w z_w 2^w``), which
        leaves every likelihood ratio unchanged (``P(report | v)`` depends on v only through
        ``z_v``): ``P(z | v) = w(z) (p* if z_v else 1 - p*)`` with
        ``w(z) = 2 (m-1)/m 2^-d + (1/m) [z is all ones or all zeros]`` (coefficient 0 supports all
        or nothing; any other makes the items' signs i.i.d. fair coins)."""
        if not self._enumerable:
            raise ValueError(
                f"oracle '{self.name}': the output table would have more than {_TABLE_ROWS} rows "
                f"(d={self.d}, m={self.buckets}, k={self.functions}, estimator={self.variant})"
            )
        d, m, p = self.d, self.buckets, self._p
        if self.fixed_family:
            k = self.functions
            j, l, plus = np.meshgrid(np.arange(k), np.arange(m), np.array([False, True]), indexing="ij")
            j, l, plus = j.ravel(), l.ravel(), plus.ravel()
            S = hadamard_sign(self.table[j], l[:, None]) == plus[:, None]
            P = np.where(S, p, 1 - p) / (k * m)
            return P, S
        rows = np.arange(1 << d)
        S = ((rows[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
        ones = S.sum(axis=1)
        weight = 2 * (m - 1) / m * 0.5**d + ((ones == 0) | (ones == d)) / m
        return weight[:, None] * np.where(S, p, 1 - p), S

    def output_rows(self, reports: SketchReports) -> np.ndarray:
        if self.fixed_family:
            return (reports.function * self.buckets + reports.coefficient) * 2 + reports.votes
        return (self.support_matrix(reports).astype(np.int64) << np.arange(self.d)).sum(axis=1)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(HCMS)
