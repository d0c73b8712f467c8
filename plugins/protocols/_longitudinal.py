"""Memoized two-layer randomized response over rounds: the shared machinery of the longitudinal
protocols (docs/longitudinal.md).

A user holding value ``x`` in a round reports ``IRR(PRR(x))``: the *permanent* randomized response
``PRR(x)`` is drawn once per user and value and memoized (a user who returns to a value reuses its
PRR), the *instantaneous* one afresh in every report (Erlingsson, Pihur & Korolova, "RAPPOR", CCS
2014, §3; Arcolezi, Pinzón, Palamidessi & Gambs, "Frequency Estimation of Evolving Data Under Local
Differential Privacy", EDBT 2023, arXiv:2210.00262, §3). Both layers are GRR over ``[k]`` or unary
encoding over ``[d]`` bits (:class:`Chain`), with ``(p1, q1)`` the PRR's and ``(p2, q2)`` the
IRR's probabilities of reporting (a bit for) the input or another value. One report then supports
a held value with probability ``p* = p1 p2 + (1 - p1) q2`` and any other with ``q* = q1 p2 +
(1 - q1) q2`` (Arcolezi et al. 2023, §3.2), and the per-round estimator

    f_hat(v) = (C_v / n - q*) / (p* - q*),      p* - q* = (p1 - q1)(p2 - q2),

is unbiased, with variance ``[f p*(1 - p*) + (1 - f) q*(1 - q*)] / (n (p* - q*)^2)``: users'
reports are independent, each a Bernoulli(p*) or Bernoulli(q*) support of v. At ``f = 0`` it is the
paper's approximate variance ``q*(1 - q*) / (n (p1 - q1)^2 (p2 - q2)^2)`` (its Eq. for
``Var*[f_hat]``, :meth:`Chain.approx_variance`).

Accounting (Arcolezi et al. 2023, §3.1): the PRR alone bounds what any number of reports of one
value reveal, ``eps_inf = ln(p1/q1)`` (GRR) or ``ln(p1 (1 - q1) / (q1 (1 - p1)))`` (UE); one
report is ``eps_1``-LDP with ``eps_1 = ln(p*/q*)`` or ``ln(p* (1 - q*) / (q* (1 - p*)))``. A change
of value draws a new PRR: ``eps_inf`` again per distinct value held (sequential composition).

Two simulation paths, the same law:

- per-user: every (user, value) pair's PRR drawn (an item, or ``d`` bits: O(pairs * d) memory for
  UE), then every user's IRR in every round;
- aggregate, exact: the PRRs are summed per *activity pattern* (the set of rounds in which a
  (user, value) pair is held, a ``T``-bit mask; at most ``min(pairs, 2^T)`` of them, one for a
  static population): for the pattern's ``h[v]`` pairs holding v, GRR's PRR outputs are
  ``Binomial(h[v], p1 - q1)`` kept plus a uniform multinomial of the rest, UE's ones in bit v are
  ``Binomial(h[v], p1) + Binomial(pairs - h[v], q1)`` (bits of distinct pairs are independent).
  Round t's PRR histogram is the sum over the patterns active in t; its IRR is drawn from it as
  binomials (UE: ``Binomial(B_v, p2) + Binomial(n - B_v, q2)``) or GRR's keep-or-uniform mixture.
  Cost O(patterns * d * T), independent of n once the patterns are counted (O(n T^2) comparisons
  for T <= 32 rounds, a sort of the n T (user, value) keys beyond).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate, Population
from ldpbench.types.rounds import MEAN_LABEL, ROUND_LABEL

#: The most rounds the aggregate path counts patterns of (a T-bit mask per pair in an int64).
MAX_AGGREGATE_ROUNDS = 62

#: Up to this many rounds, (user, value) pairs are found by comparing rounds (``_round_masks``,
#: O(T^2 n)) rather than by sorting the n T keys.
MASK_ROUNDS = 32


@dataclass(frozen=True)
class Chain:
    """The two layers of a memoized report: ``kind`` ``grr`` (over ``k`` values) or ``ue`` (``k``
    bits), PRR ``(p1, q1)``, IRR ``(p2, q2)`` (module docstring)."""

    kind: str
    k: int
    p1: float
    q1: float
    p2: float
    q2: float

    @property
    def p_star(self) -> float:
        """P(a report supports the user's value)."""
        return self.p1 * self.p2 + (1 - self.p1) * self.q2

    @property
    def q_star(self) -> float:
        """P(a report supports a given other value)."""
        return self.q1 * self.p2 + (1 - self.q1) * self.q2

    @property
    def eps_inf(self) -> float:
        """The PRR's budget: the bound over any number of reports of one value."""
        return _ratio(self.kind, self.p1, self.q1)

    @property
    def eps_1(self) -> float:
        """One report's budget (PRR and IRR composed)."""
        return _ratio(self.kind, self.p_star, self.q_star)

    def estimate(self, support: np.ndarray, n: int) -> np.ndarray:
        """``(C_v / n - q*) / (p* - q*)``."""
        return (np.asarray(support, dtype=float) / max(n, 1) - self.q_star) / (self.p_star - self.q_star)

    def variance(self, n: int, f: np.ndarray | float) -> np.ndarray:
        """The exact variance of :meth:`estimate` at true frequencies ``f`` (module docstring)."""
        ps, qs = self.p_star, self.q_star
        f = np.asarray(f, dtype=float)
        return (f * ps * (1 - ps) + (1 - f) * qs * (1 - qs)) / (n * (ps - qs) ** 2)

    def round_covariance(self, n: int, f: np.ndarray | float) -> np.ndarray:
        """The covariance of two rounds' estimates for users who kept their value (one PRR):
        a user's supports share the PRR, ``Cov = pi (1 - pi) (p2 - q2)^2`` with ``pi = p1`` or
        ``q1``, so ``[f p1 (1 - p1) + (1 - f) q1 (1 - q1)] / (n (p1 - q1)^2)``; 0 for the naive
        protocol (``p1 = 1``, ``q1 = 0``)."""
        f = np.asarray(f, dtype=float)
        p1, q1 = self.p1, self.q1
        return (f * p1 * (1 - p1) + (1 - f) * q1 * (1 - q1)) / (n * (p1 - q1) ** 2)

    def approx_variance(self, n: int) -> float:
        """The paper's ``Var*[f_hat] = q*(1 - q*) / (n (p1 - q1)^2 (p2 - q2)^2)`` (f = 0)."""
        qs = self.q_star
        return qs * (1 - qs) / (n * (self.p1 - self.q1) ** 2 * (self.p2 - self.q2) ** 2)


def _ratio(kind: str, p: float, q: float) -> float:
    """The LDP budget of a GRR (``ln p/q``) or UE (``ln p(1-q)/(q(1-p))``) layer."""
    if q <= 0 or (kind == "ue" and p >= 1):
        return math.inf
    return math.log(p / q) if kind == "grr" else math.log(p * (1 - q) / (q * (1 - p)))


def grr_layer(k: int, eps: float) -> tuple[float, float]:
    """GRR's ``(p, q) = (e^eps, 1) / (e^eps + k - 1)``."""
    e = math.exp(eps)
    return e / (e + k - 1), 1 / (e + k - 1)


def sue_layer(eps: float) -> tuple[float, float]:
    """Symmetric unary encoding (basic RAPPOR): ``p = e^(eps/2) / (e^(eps/2) + 1)``, ``q = 1 - p``."""
    e = math.exp(eps / 2)
    return e / (e + 1), 1 / (e + 1)


def oue_layer(eps: float) -> tuple[float, float]:
    """Optimized unary encoding (Wang et al., USENIX Security 2017): ``p = 1/2``, ``q = 1/(e^eps + 1)``."""
    return 0.5, 1 / (math.exp(eps) + 1)


def solve_irr(kind: str, k: int, p1: float, q1: float, irr: str, eps_1: float) -> Chain:
    """The chain whose one report is exactly ``eps_1``-LDP, the IRR of family ``irr`` (``grr``:
    ``q2 = (1 - p2)/(k - 1)``; ``sue``: ``q2 = 1 - p2``; ``oue``: ``p2 = 1/2``) solved for its free
    parameter (the composite budget is monotone in it: a root of one equation, Arcolezi et al.
    2023 §3.2 solve the same constraint in closed form). Raises :class:`NotApplicable` when no
    IRR of the family reaches ``eps_1`` (``eps_1 >= eps_inf``, or past what OUE's IRR allows)."""

    def chain(x: float) -> Chain:
        if irr == "grr":
            return Chain(kind, k, p1, q1, x, (1 - x) / (k - 1))
        if irr == "sue":
            return Chain(kind, k, p1, q1, x, 1 - x)
        return Chain(kind, k, p1, q1, 0.5, x)

    if irr == "grr" and kind == "grr" and k > 1:
        # Linear in p2: p* = A p2 + B, q* = C p2 + D (q2 = (1 - p2) a, a = 1/(k - 1)), and
        # p* = e^eps_1 q*  gives  p2 = (e D - B) / (A - e C).
        a, e = 1 / (k - 1), math.exp(eps_1)
        A, B, C, D = p1 - (1 - p1) * a, (1 - p1) * a, q1 - (1 - q1) * a, (1 - q1) * a  # noqa: N806
        p2 = (e * D - B) / (A - e * C) if A != e * C else math.nan
        if not (0 < eps_1 < _ratio(kind, p1, q1) and 1 / k < p2 <= 1):
            raise NotApplicable(
                f"no GRR instantaneous layer gives eps_1 = {eps_1:g} after this permanent one "
                f"(eps_inf = {_ratio(kind, p1, q1):g}): choose a smaller eps_1 (alpha)"
            )
        return chain(p2)
    from scipy.optimize import brentq  # on first use: loading the plugins imports no scipy.optimize

    lo, hi = {"grr": (1 / k, 1.0), "sue": (0.5, 1.0), "oue": (0.5, 0.0)}[irr]
    top = chain(hi).eps_1 if irr != "oue" else chain(1e-300).eps_1
    if not 0 < eps_1 < top:
        raise NotApplicable(
            f"no {irr.upper()} instantaneous layer gives eps_1 = {eps_1:g} after this permanent one "
            f"(eps_inf = {chain(hi).eps_inf:g}): choose a smaller eps_1 (alpha)"
        )
    x = brentq(
        lambda x: chain(x).eps_1 - eps_1,
        min(lo, hi) if irr != "oue" else 1e-300,
        max(lo, hi),
        xtol=1e-15,
        rtol=1e-15,
        maxiter=500,
    )
    return chain(x)


# --- simulation --------------------------------------------------------------------------------


def _round_masks(items: np.ndarray) -> np.ndarray:
    """``(T, n)``: for each round and user, the T-bit mask of the rounds in which that user holds
    this round's value (bit s for round s). T passes of one comparison each, O(T^2 n) but no sort:
    far cheaper than sorting the ``n T`` (user, value) keys for the small T this is used for."""
    T = items.shape[0]  # noqa: N806
    dtype = np.uint16 if T <= 16 else np.uint32
    small = items.astype(np.int32) if items.size and int(items.max()) < 2**31 else items
    masks = np.zeros(items.shape, dtype=dtype)
    held = np.empty(items.shape, dtype=bool)
    bit = np.empty(items.shape, dtype=dtype)
    for s in range(T):
        np.equal(small, small[s], out=held)
        np.left_shift(held, dtype(s), out=bit, dtype=dtype, casting="unsafe")
        masks |= bit
    return masks


def _first_rounds(masks: np.ndarray) -> np.ndarray:
    """``(T, n)``: the first round of each (round, user)'s pair, the lowest set bit of its mask."""
    lowest = masks & (~masks + masks.dtype.type(1))
    return np.frexp(lowest.astype(np.float64))[1] - 1  # exact: a power of two's exponent


def _pairs(items: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Each (user, value) pair once: its value, and for every round and user the pair's index.
    Pairs are numbered by their first round, then by user (the order the per-user path draws
    their PRRs in)."""
    T, n = items.shape  # noqa: N806
    if T <= MASK_ROUNDS:
        first_round = _first_rounds(_round_masks(items))
    else:  # a sort of the n T (user, value) keys: each occurrence's first round from its pair's
        keys = np.arange(n, dtype=np.int64)[None, :] * d + items
        _, start, inverse = np.unique(keys, return_index=True, return_inverse=True)
        first_round = (start // n)[inverse.reshape(T, n)]
    first = first_round == np.arange(T)[:, None]
    ids = np.cumsum(first.ravel()).reshape(T, n) - 1
    return items[first], np.take_along_axis(ids, first_round, axis=0)


def bernoulli_bits(high: np.ndarray, p_high: float, p_low: float, rng: np.random.Generator) -> np.ndarray:
    """Independent bits, 1 with probability ``p_high`` where ``high`` is set and ``p_low``
    elsewhere: the law of ``rng.random(high.shape) < np.where(high, p_high, p_low)``, exactly.

    A random byte ``u`` decides a bit of probability ``p`` unless it equals ``t = floor(256 p)``
    (capped at 255): ``u < t`` with probability ``t/256``, and in the one case in 256 where
    ``u == t`` a uniform decides with probability ``256 p - t``, so ``P(1) = p`` (``256 p - t`` is
    exact in floating point). One byte per bit instead of an 8-byte uniform: the per-user draw of
    the unary protocols' ``n T d`` bits costs about half as much."""
    scaled = (256.0 * p_high, 256.0 * p_low)
    t_high, t_low = (min(int(x), 255) for x in scaled)
    u = np.frombuffer(rng.bytes(high.size), dtype=np.uint8).reshape(high.shape)
    # with lo <= hi the two thresholds: u < lo, or u < hi where `high` picks hi
    if t_high >= t_low:
        ones = (u < t_low) | (high & (u < t_high))
    else:
        ones = (u < t_high) | (~high & (u < t_low))
    at_low = u == t_low
    tie = at_low ^ (high & ((u == t_high) ^ at_low))  # u == t_high where `high`, else u == t_low
    where = np.flatnonzero(tie)
    if where.size:
        frac = np.where(high.ravel()[where], scaled[0] - t_high, scaled[1] - t_low)
        ones.ravel()[where] = rng.random(where.size) < frac
    return ones


def per_user_support(chain: Chain, items: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(T, d)`` support counts, every pair's PRR and every report's IRR drawn."""
    values, inverse = _pairs(items, d)
    P = values.size  # noqa: N806
    T, n = items.shape  # noqa: N806
    out = np.empty((T, d), dtype=np.int64)
    if chain.kind == "grr":
        prr = np.where(rng.random(P) < chain.p1 - chain.q1, values, rng.integers(0, d, size=P))
        for t in range(T):  # one vectorized draw per round
            x = prr[inverse[t]]
            rep = np.where(rng.random(n) < chain.p2 - chain.q2, x, rng.integers(0, d, size=n))
            out[t] = np.bincount(rep, minlength=d)
        return out
    held = np.zeros((P, d), dtype=bool)
    held[np.arange(P), values] = True
    prr = bernoulli_bits(held, chain.p1, chain.q1, rng)
    for t in range(T):
        out[t] = np.count_nonzero(bernoulli_bits(prr[inverse[t]], chain.p2, chain.q2, rng), axis=0)
    return out


def pattern_histogram(items: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The activity patterns (T-bit masks of the rounds a (user, value) pair is held in) and, per
    pattern, how many pairs hold each value: ``(patterns, (patterns, d) counts)``."""
    T = items.shape[0]  # noqa: N806
    if T <= MASK_ROUNDS:
        masks = _round_masks(items)
        first = _first_rounds(masks) == np.arange(T)[:, None]  # each pair counted in its first round
        pair_masks, values = masks[first].astype(np.int64), items[first]
    else:
        values, inverse = _pairs(items, d)
        pair_masks = np.zeros(values.size, dtype=np.int64)
        for t in range(T):  # each (pair, round) once: the bits add without carries
            np.add.at(pair_masks, inverse[t], np.int64(1) << t)
    if T <= 16:  # a table over the 2^T possible masks instead of a sort of the pairs'
        present = np.bincount(pair_masks, minlength=1 << T)
        patterns = np.flatnonzero(present)
        which = np.cumsum(present > 0)[pair_masks] - 1
    else:
        patterns, which = np.unique(pair_masks, return_inverse=True)
    hist = np.bincount(which * d + values, minlength=patterns.size * d).reshape(patterns.size, d)
    return patterns, hist


def aggregate_support(chain: Chain, items: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(T, d)`` support counts by the exact aggregate draw over activity patterns (module docstring)."""
    T, n = items.shape  # noqa: N806
    if T > MAX_AGGREGATE_ROUNDS:
        return per_user_support(chain, items, d, rng)
    patterns, hist = pattern_histogram(items, d)
    size = hist.sum(axis=1)
    if chain.kind == "grr":
        kept = rng.binomial(hist, chain.p1 - chain.q1)
        prr = kept + rng.multinomial(size - kept.sum(axis=1), np.full(d, 1 / d))
    else:
        ones = rng.binomial(hist, chain.p1)
        prr = ones + rng.binomial(size[:, None] - hist, chain.q1)
    active = ((patterns[None, :] >> np.arange(T, dtype=np.int64)[:, None]) & 1).astype(float)
    held = np.rint(active @ prr.astype(float)).astype(np.int64)  # (T, d): PRR histogram / ones per round
    if chain.kind == "grr":
        kept = rng.binomial(held, chain.p2 - chain.q2)
        return kept + rng.multinomial(n - kept.sum(axis=1), np.full(d, 1 / d))
    return rng.binomial(held, chain.p2) + rng.binomial(n - held, chain.q2)


def olh_chain(d: int, eps_inf: float, eps_1: float, g: int) -> Chain:
    """L-OLH's layers over ``g`` hash buckets (Arcolezi et al. 2023, §3.4): GRR over ``[g]`` at
    ``eps_inf`` for the PRR of the hashed value, the GRR IRR solved for ``eps_1``; returned as the
    chain the server estimates with, whose ``q1`` is ``1/g`` (a user holding another value hashes it
    to the reported bucket with probability 1/g, so ``q* = 1/g``; ``p*`` does not involve q1).
    Its ``eps_inf`` and ``eps_1`` are not the protocol's: those of :func:`grr_layer` at ``g``."""
    p1, q1 = grr_layer(g, eps_inf)
    layers = solve_irr("grr", g, p1, q1, "grr", eps_1)
    return Chain("grr", g, p1, 1 / g, layers.p2, layers.q2)


def olh_buckets(eps_inf: float, eps_1: float, most: int = 4096) -> int:
    """The ``g`` of ``2 .. most`` that minimizes L-OLH's approximate variance
    ``q*(1 - q*)/(p* - q*)^2`` with ``q* = 1/g`` (the paper's optimal g, found by search rather
    than its closed form; at most ``2 e^eps_inf + 2`` buckets are tried, beyond which p* < q*)."""
    top = int(min(most, 2 * math.exp(eps_inf) + 2))
    best, best_g = math.inf, 2
    for g in range(2, max(top, 2) + 1):  # a few hundred scalar solves at most, once per run
        try:
            c = olh_chain(g, eps_inf, eps_1, g)
        except NotApplicable:
            continue
        v = c.q_star * (1 - c.q_star) / (c.p_star - c.q_star) ** 2
        if v < best:
            best, best_g = v, g
    return best_g


def olh_per_user_support(chain: Chain, items: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(T, d)`` support counts of L-OLH: a hash seed and a PRR bucket per (user, value) pair,
    an IRR bucket per report, each report matched against every item's hash (O(n d) per round)."""
    from ldpbench_plugins.oracles import _hashing

    from ._candidates import item_keys

    g = chain.k
    values, inverse = _pairs(items, d)
    P = values.size  # noqa: N806
    T, n = items.shape  # noqa: N806
    seeds = _hashing.random_seeds(P, rng)
    hashed = _hashing.hash_pairs(seeds, item_keys(values.astype(np.uint64)), g).astype(np.int64)
    keep1 = chain.p1 - (1 - chain.p1) / (g - 1)  # GRR over [g] as keep-or-uniform
    prr = np.where(rng.random(P) < keep1, hashed, rng.integers(0, g, size=P))
    keys = item_keys(np.arange(d, dtype=np.uint64))
    out = np.empty((T, d), dtype=np.int64)
    for t in range(T):
        x = prr[inverse[t]]
        rep = np.where(rng.random(n) < chain.p2 - chain.q2, x, rng.integers(0, g, size=n))
        out[t] = _hashing.matches_per_value(seeds[inverse[t]], rep.astype(np.uint64), keys, g)
    return out


def static_supports(chain: Chain, values: np.ndarray, T: int, rng: np.random.Generator) -> np.ndarray:  # noqa: N803
    """``(users, d)``: how many of T reports of users who keep ``values[i]`` support each item (one
    PRR each, T IRRs), for the averaging attack (``ldpbench.audit.averaging``)."""
    values = np.asarray(values, dtype=np.int64)
    m, d = values.size, chain.k
    if chain.kind == "grr":
        prr = np.where(rng.random(m) < chain.p1 - chain.q1, values, rng.integers(0, d, size=m))
        kept = rng.binomial(T, chain.p2 - chain.q2, size=m)
        counts = rng.multinomial(T - kept, np.full(d, 1 / d))
        counts[np.arange(m), prr] += kept
        return counts
    bits = rng.random((m, d)) < chain.q1
    bits[np.arange(m), values] = rng.random(m) < chain.p1
    return rng.binomial(T, np.where(bits, chain.p2, chain.q2))


def olh_static_supports(chain: Chain, d: int, values: np.ndarray, T: int, rng: np.random.Generator) -> np.ndarray:  # noqa: N803
    """``(users, d)`` of L-OLH for users who keep ``values[i]``: one hash seed and PRR bucket per
    user, T IRR buckets; item v is supported by the reports in the bucket ``v`` hashes to under
    the user's seed (the server's count of ``olh_per_user_support``)."""
    from ldpbench_plugins.oracles import _hashing

    from ._candidates import item_keys

    values = np.asarray(values, dtype=np.int64)
    m, g = values.size, chain.k
    seeds = _hashing.random_seeds(m, rng)
    table = _hashing.hash_table(seeds, item_keys(np.arange(d, dtype=np.uint64)), g)  # (m, d)
    keep1 = chain.p1 - (1 - chain.p1) / (g - 1)
    hashed = table[np.arange(m), values]
    prr = np.where(rng.random(m) < keep1, hashed, rng.integers(0, g, size=m))
    kept = rng.binomial(T, chain.p2 - chain.q2, size=m)
    buckets = rng.multinomial(T - kept, np.full(g, 1 / g))
    buckets[np.arange(m), prr] += kept
    return np.take_along_axis(buckets, table, axis=1)


def round_estimates(
    chain: Chain,
    population: Population,
    epsilon: float,
    rng: np.random.Generator,
    simulation: str,
    mechanism: str,
    draw: Callable[..., np.ndarray] | None = None,
    declared: dict[str, object] | None = None,
) -> dict[str, Estimate]:
    """One :class:`Estimate` per round, labelled ``round-t`` (1-based), of a sequence population.
    ``declared`` (:func:`declared_budgets`) goes into every estimate's ``info``: the rows' and the
    leaderboard's ``epsilon_inf`` and ``epsilon_1`` columns read it."""
    rounds = population.rounds
    if rounds is None:
        raise NotApplicable(f"{mechanism} collects over rounds: it needs a sequence population (record 'sequence')")
    d, n = population.d, rounds.n
    if draw is None:
        draw = per_user_support if simulation == "per-user" else aggregate_support
    support = draw(chain, rounds.items, d, rng)
    variance = np.full(d, chain.approx_variance(n))
    info = {
        "eps_inf": chain.eps_inf,
        "eps_1": chain.eps_1,
        "p1": chain.p1,
        "q1": chain.q1,
        "p2": chain.p2,
        "q2": chain.q2,
        **(declared or {}),
    }
    out = {
        ROUND_LABEL.format(t=t + 1): Estimate(
            frequencies=chain.estimate(support[t], n),
            n=n,
            epsilon=float(epsilon),
            mechanism=mechanism,
            p_star=chain.p_star,
            q_star=chain.q_star,
            variance=variance,
            support_counts=support[t],
            info=info,
        )
        for t in range(rounds.T)
    }
    # The averaged-over-rounds view; its variance is V-approx's at f = 0 for users who keep their
    # value (Var* + (T - 1) Cov*) / T: the shared PRR makes averaging help less than 1/T.
    T = rounds.T  # noqa: N806
    cov = float(chain.round_covariance(n, 0.0))
    out[MEAN_LABEL] = Estimate(
        frequencies=np.mean([e.frequencies for e in out.values()], axis=0),
        n=n,
        epsilon=float(epsilon),
        mechanism=mechanism,
        variance=np.full(d, (chain.approx_variance(n) + (T - 1) * cov) / T),
        info={**info, "rounds": T},
    )
    return out


def declared_budgets(accounting: list[dict[str, object]]) -> dict[str, object]:
    """``{"epsilon_inf", "epsilon_1"}`` of a protocol's :meth:`privacy_accounting` (its first
    group): what an estimate's ``info`` carries to the result rows (``epsilon_inf`` None: no bound)."""
    entry = accounting[0]
    return {"epsilon_inf": entry.get("epsilon_inf"), "epsilon_1": entry.get("epsilon_1")}


ON_CHANGE = (
    "a new permanent response for the new value: epsilon_inf again per distinct value a user holds "
    "(sequential composition over the values)"
)


def memo_accounting(eps_inf: float, eps_1: float) -> list[dict[str, object]]:
    """The run manifest's entry of a memoized protocol: ``epsilon_inf``, ``epsilon_1``, ``on_change``."""
    return [
        {
            "group": "all users",
            "model": "local",
            "epsilon": float(eps_inf),
            "epsilon_inf": float(eps_inf),
            "epsilon_1": float(eps_1),
            "on_change": ON_CHANGE,
        }
    ]


def naive_accounting(eps: float) -> list[dict[str, object]]:
    """The naive protocol's entry: every report spends ``eps`` afresh; no bound over rounds
    (``epsilon_inf`` is ``None``: T reports of one value are ``T * eps``-LDP and no better)."""
    return [
        {
            "group": "all users",
            "model": "local",
            "epsilon": float(eps),
            "epsilon_inf": None,
            "epsilon_1": float(eps),
            "per_report": float(eps),
            "on_change": "nothing changes: every report, of a new value or not, spends epsilon_1; "
            "T rounds spend T * epsilon_1 (sequential composition, unbounded in T)",
        }
    ]
