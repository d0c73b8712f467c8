"""Optimized local hashing over a candidate set of a domain that is never enumerated (private).

One round of a heavy-hitter protocol: users report an item (a prefix of theirs, or their item) with
OLH (Wang, Blocki, Li & Jha, USENIX Security 2017, §4.4: ``g = round(e^eps) + 1`` buckets; a user
with item v and hash seed s sends ``(s, y)`` with ``y = H_s(v)`` with probability
``p = e^eps / (e^eps + g - 1)``, else one of the other g - 1 buckets), and the server counts, for
each candidate c only, the reports that support it, ``C_c = #{j : H_{s_j}(c) = y_j}``. A user
holding c supports it with probability ``p* = p``, any other user with ``q* = 1/g``,
so ``(C_c - N q*) / (p* - q*)`` estimates the number of the round's N users holding c.

Two paths:

- per-user: every user's report drawn and hashed (``_hashing``'s seeded splitmix64 family, the one
  OLH uses), O(N |C|) hash evaluations in blocks;
- aggregate: ``C_c ~ Binomial(N_c, p*) + Binomial(N - N_c, q*)``, independently over candidates.
  This is the exact law of the per-user path under an ideally random hash family, where a user's
  hash values at distinct items are independent uniform draws: a user holding v supports c != v
  with probability 1/g whatever they sent, independently of every other candidate
  (docs/heavy-hitters.md records the argument). The per-user path's real hash
  differs from the ideal one by its 2^-32 bucket bias and by undetectable cross-value dependence
  (``_hashing``'s docstring); the statistical tests compare the two paths.
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench_plugins.oracles import _hashing
from ldpbench_plugins.oracles._common import as_items
from ldpbench_plugins.oracles.olh import OLH, OLHReports

#: Bits a report's hash seed takes on the wire (a 64-bit seed names the user's hash function).
SEED_BITS = 64


def olh_buckets(epsilon: float) -> int:
    """``g = round(e^eps) + 1`` ([W17] §4.4), at most the hash family's range."""
    return int(min(_hashing.MAX_RANGE, round(math.exp(epsilon)) + 1))


def olh_probabilities(epsilon: float) -> tuple[float, float]:
    """``(p*, q*)`` of OLH at ``epsilon``: ``e^eps / (e^eps + g - 1)`` and ``1 / g``."""
    g = olh_buckets(epsilon)
    e = math.exp(epsilon)
    return e / (e + g - 1), 1.0 / g


def report_bits(epsilon: float) -> int:
    """Bits of one OLH report: the seed and a bucket of [g]."""
    return SEED_BITS + max(1, math.ceil(math.log2(olh_buckets(epsilon))))


def item_keys(items: np.ndarray) -> np.ndarray:
    """Per-item 64-bit keys ``mix64((v + 1) * GAMMA)`` for uint64 items (a bijection: wraps at 2^64)."""
    z = np.asarray(items, dtype=np.uint64) + np.uint64(1)
    z *= _hashing._GAMMA
    return _hashing.mix64(z)


def perturb(
    items: np.ndarray, epsilon: float, rng: np.random.Generator, g: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's OLH report ``(seed, y)`` for their item (uint64), vectorized over users
    (``g`` buckets, default :func:`olh_buckets`)."""
    g = g or olh_buckets(epsilon)
    e = math.exp(epsilon)
    p = e / (e + g - 1)
    seeds = _hashing.random_seeds(items.size, rng)
    hashed = _hashing.hash_pairs(seeds, item_keys(items), g)
    keep = rng.random(items.size) < p
    # Otherwise a uniform other bucket: shift by 1..g-1 modulo g.
    other = (hashed + rng.integers(1, max(g, 2), size=items.size)) % g
    return seeds, np.where(keep, hashed, other)


def support_counts(
    seeds: np.ndarray, reports: np.ndarray, candidates: np.ndarray, epsilon: float, g: int | None = None
) -> np.ndarray:
    """``C_c`` for every candidate (the server's work on the per-user path)."""
    return _hashing.matches_per_value(seeds, reports, item_keys(candidates), g or olh_buckets(epsilon))


def sample_support_counts(holders: np.ndarray, users: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """``C_c ~ Binomial(N_c, p*) + Binomial(N - N_c, q*)`` for candidates held by ``holders[c]``
    of the round's ``users`` (the aggregate path; see the module docstring)."""
    p, q = olh_probabilities(epsilon)
    holders = np.asarray(holders, dtype=np.int64)
    return rng.binomial(holders, p) + rng.binomial(users - holders, q)


def estimate_counts(support: np.ndarray, users: int, epsilon: float) -> np.ndarray:
    """The unbiased estimate ``(C_c - N q*) / (p* - q*)`` of the holders of each candidate."""
    p, q = olh_probabilities(epsilon)
    return (np.asarray(support, dtype=float) - users * q) / (p - q)


def holders_of(values: np.ndarray, counts: np.ndarray, bits: int, length: int, candidates: np.ndarray) -> np.ndarray:
    """How many users hold each candidate ``length``-bit prefix, from a sparse histogram whose
    ``values`` (uint64, increasing) are ``bits`` wide: O(|C| log s), the domain never listed."""
    shift = np.uint64(bits - length)
    prefixes = np.asarray(values, dtype=np.uint64) >> shift  # non-decreasing, as values are increasing
    cumulative = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    lo = np.searchsorted(prefixes, candidates, side="left")
    hi = np.searchsorted(prefixes, candidates, side="right")
    return cumulative[hi] - cumulative[lo]


def split_users(n: int, groups: int) -> np.ndarray:
    """The sizes of ``groups`` groups of ``n`` users, as equal as can be (the first ones larger)."""
    base, extra = divmod(n, groups)
    return np.array([base + (i < extra) for i in range(groups)], dtype=np.int64)


def significance_threshold(users: int, epsilon: float, candidates: int, beta: float = 0.05) -> float:
    """The estimated count above which a candidate held by nobody lands with probability at most
    ``beta / candidates`` under the normal approximation: ``z * sqrt(N q*(1 - q*)) / (p* - q*)``
    with ``z = Phi^-1(1 - beta / candidates)`` (a Bonferroni bound over the candidates; the
    threshold of OUE-Zero in Jia & Gong, INFOCOM 2019, on OLH's counts)."""
    from statistics import NormalDist

    p, q = olh_probabilities(epsilon)
    z = NormalDist().inv_cdf(1 - beta / max(candidates, 1))
    return z * math.sqrt(users * q * (1 - q)) / (p - q)


class RoundOLH(OLH):
    """One round's frequency oracle as an :class:`~ldpbench.types.Oracle`, for the audits.

    Its reports are drawn and counted by this module's :func:`perturb` and :func:`support_counts`,
    the very code a round of ``pem`` or ``fo-threshold`` runs, on the items ``0 .. d-1`` of a small
    audit domain (OLH's law for an item depends on the item only through its hash, so the budget a
    report spends does not depend on the domain's size). Everything else (the exact output table
    over the hash family, the support sets the empirical audit attacks) is the ``olh`` oracle's,
    whose hash family this module shares: the audits thus compare the round's reports with the
    law OLH declares. Not registered: the conformance kit's protocol checks audit it
    (:meth:`~ldpbench.types.Protocol.round_oracles`).
    """

    name = "olh-round"

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> OLHReports:
        v = as_items(values, self.d).astype(np.uint64)
        seeds, y = perturb(v, self.epsilon, rng, g=self.buckets)
        return OLHReports(seeds=seeds, y=y)

    def support_counts(self, reports: OLHReports) -> np.ndarray:
        return support_counts(reports.seeds, reports.y, np.arange(self.d, dtype=np.uint64), self.epsilon, self.buckets)
