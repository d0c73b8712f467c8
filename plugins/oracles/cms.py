"""Apple's count-mean sketch (CMS) ([Apple17], its count mean sketch; [Pan24]; see :mod:`._sketch`).

A user holding v hashes it to a bucket ``h(v)`` of ``[0, m)``, one-hot encodes the bucket as m bits
and flips every bit w.p. ``1/(e^(eps/2) + 1)`` (two one-hot vectors differ in two bits, each costing
eps/2: eps-LDP, as [Apple17] shows). Support: ``{w : bit h(w) is 1}``, so
``p* = e^(eps/2)/(e^(eps/2) + 1)`` and ``q* = q + (p* - q)/m`` with ``q = 1 - p*``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import OracleTags

from . import _sketch
from ._common import aggregate_param, as_counts, as_items, independent_binomials
from ._sketch import CountMeanSketch, SketchReports, stirling2

#: Bits per chunk of the per-user path (a user's report is m bits).
_BITS_PER_CHUNK = 1 << 22
#: Items per block of the exact aggregate sampler (bounds its (items x window) temporaries).
_ITEMS_PER_BLOCK = 4096
#: The aggregate sampler's core window of K: categories at least this fraction of the mode's
#: probability (the rest, below ~1e-12 in total, is drawn exactly but one item at a time).
_CORE_RELATIVE = 1e-13
#: Largest exact output table (rows).
_TABLE_ROWS = 1 << 16


class CMS(CountMeanSketch):
    """Count-mean sketch: a hashed one-hot m-bit vector, each bit flipped w.p. 1/(e^(eps/2) + 1).

    - **Per-user path**: faithful reports (a hash function and m bits per user; ``chunk_users``
      keeps a chunk near 4M bits). ``unbiased``: supports are read by evaluating each user's hash on
      the domain in blocks (O(m_users d)); ``apple``: through Apple's sketch, the bit sums per
      (function, bucket), in O(m_users m + k d).
    - **Aggregate path**, exact in distribution:

      - ``apple`` (given the family): the users of each item split over the k functions
        (multinomial), then the sketch's bit sums per (function j, bucket i) are independent,
        ``Binomial(N[j, i], p*) + Binomial(N_j - N[j, i], q)`` with N[j, i] the users of j whose item
        falls in bucket i; support counts ``c_w = sum_j S[j, h_j(w)]``. O(k (d + m)).
      - ``unbiased`` (w.r.t. the idealized protocol, a fully random function per user, as OLH's):
        a user's own bit B is Bernoulli(p*), and ``K ~ Binomial(m - 1, q)`` other bits are ones; every
        other item lands in a uniform bucket, so given ``T = B + K`` its support indicators are
        i.i.d. Bernoulli(T/m). So per item, the users' T histogram is drawn (two multinomials), and
        ``c_w = own_w + sum_t Binomial(N_t - N_t(w), t/m)``, independent over w given the
        histograms. O(d w) for a core window of w values of K (about 15 standard deviations of
        Binomial(m - 1, q) wide; users outside it, below 1e-12 of them, are drawn exactly one item
        at a time). With the real seeded hash each item's law is exact (to 2^-32 per bucket) and
        cross-item independence is approximate, exactly as for OLH.
      - ``aggregate: marginal`` (``unbiased`` only): each count from its exact law under the
        idealized hash, ``Binomial(n_w, p*) + Binomial(n - n_w, q*)``, independently across items:
        O(d), declared approximate (``exact_aggregate`` False, ``exact_marginals`` True; :func:`._common.aggregate_param`).
        The exact sampler cannot be made O(d) calls: given the users' numbers of ones T, item w's
        count is a sum of Binomial(N_t - N_t(w), t/m) over the window of T, whose law depends on w
        through its holders' T histogram, so it takes d x window binomial draws (about 1 s at
        d = 41,270); the marginal path takes a few ms and keeps every per-item law.
    """

    name = "cms"
    params = (
        *_sketch.sketch_params(default_m=1024),
        aggregate_param("about 1 s at d = 41,270, n = 8M; estimator: unbiased only, apple's is O(k (d + m))"),
    )

    def __init__(self, d: int, epsilon: float, m: int = 1024, **params):
        super().__init__(d=d, epsilon=epsilon, m=m, **params)

    def vote_probabilities(self) -> tuple[float, float]:
        p = 1.0 / (1.0 + math.exp(-self.epsilon / 2))
        return p, 1.0 - p

    @property
    def chunk_users(self) -> int:
        return max(1, _BITS_PER_CHUNK // self.buckets)

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
            exact_aggregate=not self._marginal,
        )

    @property
    def _marginal(self) -> bool:
        """``aggregate: marginal`` on the per-user-hash variant (Apple's exact path is already O(k (d + m)))."""
        return self.aggregate == "marginal" and not self.fixed_family

    @property
    def _enumerable(self) -> bool:
        """Whether :meth:`output_table` is small enough to enumerate (at most 65,536 rows, d <= 16)."""
        rows = self.functions * 2**self.buckets if self.fixed_family else 2**self.d
        return self.d <= 16 and rows <= _TABLE_ROWS

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> SketchReports:
        v = as_items(values, self.d)
        seeds, function = self.draw_functions(v.size, rng)
        own = self.own_buckets(v, seeds, function)
        votes = rng.random((v.size, self.buckets)) < self._q0
        votes[np.arange(v.size), own] = rng.random(v.size) < self._p
        return SketchReports(seeds=seeds, function=function, votes=votes)

    # -- aggregator side ----------------------------------------------------------------------
    def support_matrix(self, reports: SketchReports) -> np.ndarray:
        """``(n_users, d)`` bools: bit ``h_u(w)`` of user u's vector."""
        out = np.empty((reports.votes.shape[0], self.d), dtype=bool)
        for start, stop, buckets in self.bucket_blocks(reports):
            out[start:stop] = np.take_along_axis(reports.votes[start:stop], buckets, axis=1)
        return out

    def support_counts(self, reports: SketchReports) -> np.ndarray:
        if self.fixed_family:
            return self._counts_from_sketch(self._sketch(reports))
        counts = np.zeros(self.d, dtype=np.int64)
        for start, stop, buckets in self.bucket_blocks(reports):
            counts += np.take_along_axis(reports.votes[start:stop], buckets, axis=1).sum(axis=0)
        return counts

    def _sketch(self, reports: SketchReports) -> np.ndarray:
        """Apple's sketch before debiasing: ``S[j, i]`` = ones at bit i among reports of function j."""
        user, bit = np.nonzero(reports.votes)
        cells = reports.function[user] * self.buckets + bit
        return np.bincount(cells, minlength=self.functions * self.buckets).reshape(self.functions, self.buckets)

    def _counts_from_sketch(self, sketch: np.ndarray) -> np.ndarray:
        return sketch[np.arange(self.functions)[:, None], self.table].sum(axis=0).astype(np.int64)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(true_counts, self.d)
        if self.fixed_family:
            return self._sample_fixed(counts, rng)
        if self._marginal:  # declared approximate (tags): each count's exact law, independently
            return independent_binomials(counts, self._p, self._q, rng)
        return self._sample_per_user_hash(counts, rng)

    def _sample_fixed(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        k, m = self.functions, self.buckets
        per_function = rng.multinomial(counts, np.full(k, 1.0 / k))  # (d, k): users of v using j
        users = np.zeros((k, m), dtype=np.int64)
        for j in range(k):
            users[j] = np.bincount(self.table[j], weights=per_function[:, j], minlength=m).astype(np.int64)
        totals = users.sum(axis=1, keepdims=True)
        sketch = rng.binomial(users, self._p) + rng.binomial(totals - users, self._q0)
        return self._counts_from_sketch(sketch)

    @functools.cached_property
    def _k_law(self) -> tuple:
        """The law of K ~ Binomial(m - 1, q) split into the core window and the tail, once per instance:
        ``(pmf, k_lo, k_hi, tail values, P(core), core probabilities likeliest first, their unsort)``."""
        from scipy.stats import binom

        m = self.buckets
        pmf = binom.pmf(np.arange(m), m - 1, self._q0)
        core = np.flatnonzero(pmf >= pmf.max() * _CORE_RELATIVE)
        k_lo, k_hi = int(core[0]), int(core[-1]) + 1
        tail = np.concatenate([np.arange(k_lo), np.arange(k_hi, m)])
        p_core = float(pmf[k_lo:k_hi].sum()) if tail.size else 1.0
        order = np.argsort(-pmf[k_lo:k_hi], kind="stable")  # likeliest first: multinomial draws stop early
        return pmf, k_lo, k_hi, tail, p_core, pmf[k_lo:k_hi][order] / p_core, np.argsort(order)

    def _sample_per_user_hash(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The exact sampler of the class docstring. A user's ``K`` lies in a core window around
        its mode except with probability below ~1e-12; users are first split exactly between the
        core and the tail (binomial), the core ones are spread by a multinomial over the narrow
        window, and the rare tail ones one item at a time, so nothing is truncated."""
        m = self.buckets
        own = rng.binomial(counts, self._p)
        pmf, k_lo, k_hi, tail, p_core, pvals, unsort = self._k_law
        width = k_hi - k_lo + 1  # T = K or K + 1 over the core: T in [k_lo, k_hi]
        total = np.zeros(m + 1, dtype=np.int64)
        blocks, stray = [], []  # stray: (item, T, users) of users whose K fell in the tail
        for group, shift in ((counts - own, 0), (own, 1)):
            inside = rng.binomial(group, min(1.0, p_core))
            for v in np.flatnonzero(group > inside):
                spread = rng.multinomial(int(group[v] - inside[v]), pmf[tail] / pmf[tail].sum())
                for k, users in zip(tail[spread > 0], spread[spread > 0]):
                    stray.append((int(v), int(k) + shift, int(users)))
                    total[int(k) + shift] += int(users)
            for start in range(0, self.d, _ITEMS_PER_BLOCK):
                stop = min(self.d, start + _ITEMS_PER_BLOCK)
                hist = np.zeros((stop - start, width), dtype=np.int64)
                hist[:, shift : shift + width - 1] = rng.multinomial(inside[start:stop], pvals)[:, unsort]
                if shift == 0:
                    blocks.append(hist)
                else:
                    blocks[start // _ITEMS_PER_BLOCK] += hist
                total[k_lo : k_hi + 1] += hist.sum(axis=0)
        used = np.flatnonzero(total)
        lo, hi = min(k_lo, int(used[0])), max(k_hi + 1, int(used[-1]) + 1)  # the core plus any strays
        rate = np.arange(lo, hi) / m
        out = own.astype(np.int64)
        for b, hist in enumerate(blocks):
            start = b * _ITEMS_PER_BLOCK
            others = np.broadcast_to(total[lo:hi], (hist.shape[0], hi - lo)).copy()
            others[:, k_lo - lo : k_lo - lo + width] -= hist
            for v, t, users in stray:
                if start <= v < start + hist.shape[0]:
                    others[v - start, t - lo] -= users
            out[start : start + hist.shape[0]] += rng.binomial(others, rate).sum(axis=1)
        return out

    # -- exact law (the audits) ---------------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``apple``: every report (j, bits), row ``j 2^m + sum_i bit_i 2^i``. ``unbiased`` (the
        idealized protocol, a fully random function per user): reports merged by their support set
        z, row ``sum_w z_w 2^w``, which leaves every likelihood ratio unchanged: ``P((h, bits) | v)``
        is ``P0(h, bits) (p/q or (1-p)/(1-q))`` by the own bit ``z_v``, so
        ``P(z | v) = P0(z) (p/q)^{z_v} ((1-p)/(1-q))^{1 - z_v}`` with ``P0(z)`` the law of z when every
        bit is Bernoulli(q): summing over the bucket partitions of the items with ``a`` ones and
        ``b`` zeros (ones and zeros in disjoint buckets),
        ``P0 = m^-d sum_{j, j'} m!/(m-j-j')! S(a, j) S(b, j') q^j (1-q)^j'`` (S: Stirling numbers of
        the second kind)."""
        if not self._enumerable:
            raise ValueError(
                f"oracle '{self.name}': the output table would have more than {_TABLE_ROWS} rows "
                f"(d={self.d}, m={self.buckets}, k={self.functions}, estimator={self.variant})"
            )
        d, m, p, q = self.d, self.buckets, self._p, self._q0
        if self.fixed_family:
            k = self.functions
            bits = ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
            # P(bits | v, j) = P(bits | every bit Bernoulli(q)) x (p/q or (1-p)/(1-q)) by bit h_j(v)
            null = np.prod(np.where(bits, q, 1 - q), axis=1)
            ratio = np.where(bits, p / q, (1 - p) / (1 - q))  # (2^m, m)
            P = null[:, None, None] * ratio[:, self.table] / k  # (2^m, k, d)
            S = bits[:, self.table]
            return P.transpose(1, 0, 2).reshape(-1, d), S.transpose(1, 0, 2).reshape(-1, d)
        rows = np.arange(1 << d)
        S = ((rows[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
        ones = S.sum(axis=1)
        null = np.array([self._null_probability(int(a), d - int(a)) for a in range(d + 1)])[ones]
        P = null[:, None] * np.where(S, p / q, (1 - p) / (1 - q))
        return P, S

    def _null_probability(self, a: int, b: int) -> float:
        m, q = self.buckets, self._q0
        total = 0.0
        for j in range(a + 1):
            for jj in range(b + 1):
                if j + jj > m:
                    continue
                falling = math.perm(m, j + jj)
                total += falling * stirling2(a, j) * stirling2(b, jj) * q**j * (1 - q) ** jj
        return total / m ** (a + b)

    def output_rows(self, reports: SketchReports) -> np.ndarray:
        if self.fixed_family:
            bits = (reports.votes.astype(np.int64) << np.arange(self.buckets)).sum(axis=1)
            return reports.function * (1 << self.buckets) + bits
        return (self.support_matrix(reports).astype(np.int64) << np.arange(self.d)).sum(axis=1)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(CMS)
