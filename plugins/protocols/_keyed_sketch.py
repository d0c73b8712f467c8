"""Apple's count-mean sketches over 64-bit keys that are never enumerated (private; SFP's and
Bitstogram's frequency oracle machinery, docs/heavy-hitters.md).

The ``cms`` and ``hcms`` oracles (``plugins/oracles/cms.py``, ``hcms.py``, ``_sketch.py``) with
Apple's fixed family of ``k`` hash functions (``estimator: apple``; Apple Differential Privacy Team,
"Learning with Privacy at Scale", 2017, §"Count Mean Sketch" and §"Hadamard Count Mean Sketch")
list their domain ``[d]`` once to tabulate the family. A heavy-hitter protocol reports keys of a
domain it may not list (a 64-bit word, or a (hash, fragment) pair), so this module hashes keys on
demand with the **same** family (the same seeds, ``_hashing.random_seeds(k, default_rng(hash_seed))``,
the same ``H_s(key) = reduce_m(mix64(s XOR key))``) and otherwise borrows everything from the
oracles: their vote probabilities ``(p, q0)`` and ``(p*, q*)``, their report record
(:class:`~ldpbench_plugins.oracles._sketch.SketchReports`), HCMS's Hadamard sign and FWHT readout
and HCMS's exact splitting sampler. A key ``x`` is the item key ``mix64((x + 1) GAMMA)`` of
``_candidates.item_keys`` (equal to ``_hashing.value_keys`` on ``[0, 2^63)``), so on ``[d]`` a
:class:`KeyedSketch` hashes exactly as the oracle's table does (tested).

A user picks a function ``j`` uniformly from the k, hashes her key to ``b = h_j(x)`` in ``[0, m)``
and sends (CMS) ``j`` and an m-bit one-hot vector of b, every bit flipped w.p. ``1/(e^(eps/2) + 1)``;
(HCMS) ``j``, a uniform coefficient ``l`` and the sign ``H_m[b, l]`` kept w.p. ``e^eps/(e^eps + 1)``.
The server keeps Apple's sketch, a sufficient statistic: (CMS) ``S[j, i]`` the ones at bit i among
reports of function j; (HCMS) ``D[j, l]`` the signed sum of the signs of reports with (j, l). A
candidate key w is supported by ``c_w = sum_j S[j, h_j(w)]`` (CMS) or
``c_w = (N + sum_j FWHT(D_j)[h_j(w)]) / 2`` (HCMS) of the N reports, and
``(c_w - N q*) / (p* - q*)`` estimates its holders (Apple's estimator; biased given the family by
the collisions of ``_sketch``'s docstring).

**Aggregate path, exact in distribution** (given the family, no idealized hash): the users of
each distinct key split over the k functions (a multinomial), which gives the users ``U[j, i]`` of
function j whose key falls in bucket i; then (CMS) the sketch's entries are independent,
``S[j, i] ~ Binomial(U[j, i], p) + Binomial(N_j - U[j, i], q0)`` (every bit of every report is
flipped independently), and (HCMS) each function's ``(l, sign)`` histogram is Hadamard Response's
over ``2m`` outputs (HCMS's docstring), drawn by ``_hadamard.exact_histograms``. O(s k + k m log m)
for s distinct keys, never O(N).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench_plugins.oracles import _hadamard, _hashing
from ldpbench_plugins.oracles._common import as_items
from ldpbench_plugins.oracles._fwht import fwht
from ldpbench_plugins.oracles._sketch import SketchReports
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS, hadamard_sign

from ._candidates import item_keys

ORACLES = {"cms": CMS, "hcms": HCMS}
#: CMS's per-user path: bits of the (users x m) vote matrix drawn at once.
_BITS_PER_CHUNK = 1 << 22
#: Candidates hashed at once by :meth:`KeyedSketch.support_counts` (a (k, block) table).
_CANDIDATES_PER_BLOCK = 1 << 16


class KeyedSketch:
    """CMS or HCMS with Apple's fixed family over keys hashed on demand (module docstring)."""

    def __init__(self, oracle: str, epsilon: float, m: int, k: int, hash_seed: int = 0):
        if oracle not in ORACLES:
            raise ValueError(f"sketch oracle must be one of {tuple(ORACLES)}, got {oracle!r}")
        #: The oracle at a two-item domain: its checks of m, k, epsilon and its probabilities.
        self.reference = ORACLES[oracle](d=2, epsilon=epsilon, m=m, k=k, estimator="apple", hash_seed=hash_seed)
        self.kind, self.m, self.k, self.epsilon = oracle, int(m), int(k), float(epsilon)
        self.p, self.q0 = self.reference.vote_probabilities()
        self.p_star, self.q_star = self.reference.p_star, self.reference.q_star
        self.seeds = _hashing.random_seeds(self.k, np.random.default_rng(int(hash_seed)))
        self._log_m = self.m.bit_length() - 1

    # -- hashing ------------------------------------------------------------------------------
    def buckets(self, keys: np.ndarray, function: np.ndarray) -> np.ndarray:
        """``h_{function[u]}(keys[u])`` elementwise (int64 in [0, m))."""
        return _hashing.hash_pairs(self.seeds[function], keys, self.m)

    def table(self, keys: np.ndarray) -> np.ndarray:
        """``h_j(keys[c])`` for every function j: shape ``(k, len(keys))``."""
        return _hashing.hash_table(self.seeds, keys, self.m)

    def report_bits(self) -> int:
        """Bits of one report: the function's index and (CMS) m bits or (HCMS) a coefficient and a sign."""
        index = max(0, math.ceil(math.log2(self.k)))
        return index + (self.m if self.kind == "cms" else self._log_m + 1)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, keys: np.ndarray, rng: np.random.Generator) -> SketchReports:
        """Every user's report for her key (uint64 item keys), vectorized over users."""
        n = keys.size
        function = rng.integers(0, self.k, size=n)
        own = self.buckets(keys, function)
        if self.kind == "cms":
            votes = rng.random((n, self.m)) < self.q0
            votes[np.arange(n), own] = rng.random(n) < self.p
            return SketchReports(seeds=None, function=function, votes=votes)
        coefficient = rng.integers(0, self.m, size=n)
        keep = rng.random(n) < self.p
        return SketchReports(
            seeds=None, function=function, votes=hadamard_sign(own, coefficient) == keep, coefficient=coefficient
        )

    # -- aggregator side ----------------------------------------------------------------------
    def sketch(self, reports: SketchReports) -> np.ndarray:
        """Apple's sketch of a chunk of reports: (CMS) ``S[j, i]``; (HCMS) ``D[j, l]`` (int64, (k, m))."""
        k, m = self.k, self.m
        if self.kind == "cms":
            # per function, the column sums of its users' vote rows (measured faster than a
            # one-hot matrix product or a sorted reduceat at m = 64 and 1024)
            return np.stack([reports.votes[reports.function == j].sum(axis=0, dtype=np.int64) for j in range(k)])
        cells = reports.function * m + reports.coefficient
        plus = np.bincount(cells[reports.votes], minlength=k * m)
        minus = np.bincount(cells[~reports.votes], minlength=k * m)
        return (plus - minus).reshape(k, m).astype(np.int64)

    def sketch_of(self, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The per-user path: every user's report drawn (in chunks) and summed into the sketch."""
        chunk = max(1, _BITS_PER_CHUNK // self.m) if self.kind == "cms" else 1 << 20
        total = np.zeros((self.k, self.m), dtype=np.int64)
        for start in range(0, keys.size, chunk):
            total += self.sketch(self.perturb(keys[start : start + chunk], rng))
        return total

    def sample_sketch(self, keys: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The aggregate path: the sketch of ``counts[i]`` users holding ``keys[i]``, drawn from its
        exact law (module docstring); ``keys`` need not be distinct."""
        k, m = self.k, self.m
        counts = np.asarray(counts, dtype=np.int64)
        per_function = rng.multinomial(counts, np.full(k, 1.0 / k))  # (s, k)
        users = np.zeros((k, m), dtype=np.int64)
        for j in range(k):
            b = _hashing.hash_pairs(np.full(keys.size, self.seeds[j]), keys, m)
            users[j] = np.bincount(b, weights=per_function[:, j], minlength=m).astype(np.int64)
        if self.kind == "cms":
            totals = users.sum(axis=1, keepdims=True)
            return rng.binomial(users, self.p) + rng.binomial(totals - users, self.q0)
        rows = np.zeros((k, 2 * m - 1), dtype=np.int64)  # HR rows 1..2m-1; bucket i is row m + i
        rows[:, m - 1 :] = users
        hist = _hadamard.exact_histograms(rows, self._log_m + 1, self.p, rng)  # (k, 2m): l + m [sign -1]
        return (hist[:, :m] - hist[:, m:]).astype(np.int64)

    def support_counts(self, sketch: np.ndarray, users: int, keys: np.ndarray) -> np.ndarray:
        """``c_w`` of every candidate key w from the sketch of ``users`` reports."""
        readout = sketch if self.kind == "cms" else fwht(sketch)
        rows = np.arange(self.k)[:, None]
        out = np.empty(keys.size, dtype=np.int64)
        for start in range(0, keys.size, _CANDIDATES_PER_BLOCK):
            block = keys[start : start + _CANDIDATES_PER_BLOCK]
            out[start : start + block.size] = readout[rows, self.table(block)].sum(axis=0)
        return out if self.kind == "cms" else (users + out) // 2

    def estimate_counts(self, support: np.ndarray, users: int) -> np.ndarray:
        """Apple's estimate ``(c_w - N q*) / (p* - q*)`` of each candidate's holders."""
        return (np.asarray(support, dtype=float) - users * self.q_star) / (self.p_star - self.q_star)


class _RoundSketch:
    """A round's CMS/HCMS as an oracle for the audits: Apple's fixed family, reports drawn and
    counted by :class:`KeyedSketch` (the very code SFP's and Bitstogram's rounds run) on the items
    ``0 .. d-1`` of a small audit domain. A report's law depends on the item only through its
    buckets, so the budget it spends does not depend on the domain, nor on m and k: the audit's
    defaults are small (the exact table lists every (function, report))."""

    def _keyed(self) -> KeyedSketch:
        return KeyedSketch(self.kind_name, self.epsilon, self.buckets, self.functions, self.hash_seed)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> SketchReports:
        return self._keyed().perturb(item_keys(as_items(values, self.d).astype(np.uint64)), rng)

    def support_counts(self, reports: SketchReports) -> np.ndarray:
        keyed = self._keyed()
        keys = item_keys(np.arange(self.d, dtype=np.uint64))
        return keyed.support_counts(keyed.sketch(reports), reports.votes.shape[0], keys)


class RoundCMS(_RoundSketch, CMS):
    """CMS with Apple's family (m = 4, k = 4 by default), drawn by :class:`KeyedSketch` (not registered)."""

    name = "cms-round"
    kind_name = "cms"

    def __init__(self, d: int, epsilon: float, m: int = 4, k: int = 4, **params):
        params.pop("estimator", None)
        super().__init__(d=d, epsilon=epsilon, m=m, k=k, estimator="apple", **params)


class RoundHCMS(_RoundSketch, HCMS):
    """HCMS with Apple's family (m = 16, k = 4 by default), drawn by :class:`KeyedSketch` (not registered)."""

    name = "hcms-round"
    kind_name = "hcms"

    def __init__(self, d: int, epsilon: float, m: int = 16, k: int = 4, **params):
        params.pop("estimator", None)
        super().__init__(d=d, epsilon=epsilon, m=m, k=k, estimator="apple", **params)


ROUND_ORACLES = {"cms": RoundCMS, "hcms": RoundHCMS}
