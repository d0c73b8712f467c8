"""The central ε that shuffling n reports of an ε0-LDP randomizer gives (docs/shuffling.md).

Every user sends one report of a pure ε0-LDP randomizer; a trusted shuffler hides who sent which;
n is known. The shuffled multiset is then (ε, δ)-DP for an ε below ε0 that this module bounds:

- :func:`fmt21_closed_form`: Feldman, McMillan & Talwar, "Hiding Among the Clones" (FOCS 2021),
  Theorem 3.1: for ε0 <= log(n / (16 log(2/δ))),
  ``ε <= log(1 + (e^ε0 - 1)/(e^ε0 + 1) * (8 sqrt(e^ε0 log(4/δ)) / sqrt(n) + 8 e^ε0 / n))``.
- :func:`fmt21_numerical`: the same paper's numerical bound (§5): the hockey-stick divergence
  between the two clone mixtures of its Theorem 3.2, computed exactly and searched over ε.
- :func:`wang24_numerical`: Wang et al., "Privacy Amplification via Shuffling: Unified,
  Simplified, and Tightened" (PVLDB 17, 2024), the variation-ratio reduction: the randomizer's
  ratio bound p = e^ε0, its total-variation bound β and its blanket ratio bound q give a pair of
  mixtures. Only their general-LDP parameters are used (:func:`wang24_parameters`: β = (p-1)/(p+1),
  q = p, which every ε0-LDP randomizer has): their per-randomizer parameters for k-ary randomized
  response give a bound that the exact loss of 6 shuffled GRR reports exceeds (docs/shuffling.md
  "Not covered"; ``tests/unit/privacy/test_shuffle.py`` shows the case), so none is used.

Both numerical bounds reduce the two neighbouring shuffled outputs to a pair of distributions over
counts (a, b) of two symbols among the n messages (the other messages are the "blanket"):

- each of the other n - 1 users independently says symbol 0 with probability r, symbol 1 with
  probability r and neither with probability 1 - 2r;
- the differing user says 0, 1 or neither with probabilities (pα, α, 1 - α - pα) in one world and
  (α, pα, 1 - α - pα) in the other.

FMT21's clones are r = e^-ε0 / 2, α = 1/(e^ε0 + 1) (Theorem 3.2: the other users are clones of the
differing user's two inputs with probability e^-ε0); Wang et al.'s are α = β/(p - 1), r = αp/q.
The ε at δ is the least ε whose hockey-stick divergence ``sum max(0, P - e^ε Q)`` is at most δ;
by the symmetry a <-> b one direction suffices. :func:`hockey_stick` computes it exactly for
every count c of the other users in a range holding all but ``tail`` of c's binomial mass, and adds
that tail (each term is at most its c's mass): the result is an upper bound, never an estimate.
The search (Brent's method on [0, ε0]) returns an ε at which that upper bound was checked to be\nat most δ, so the ε returned is an upper bound too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: The bound names a row and the manifest carry.
FMT21_NUMERICAL = "fmt21-numerical"
FMT21_CLOSED_FORM = "fmt21-closed-form"
WANG24_NUMERICAL = "wang24-numerical"
BOUNDS = (FMT21_NUMERICAL, FMT21_CLOSED_FORM, WANG24_NUMERICAL)
#: The assumptions every bound here makes, in the words the manifest and the audit use.
ASSUMPTIONS = (
    "one report per user, from a pure eps0-LDP randomizer (no other release about the user)",
    "a trusted shuffler that hides which user sent which report",
    "n, the number of reports shuffled, is known and public",
)
#: The returned ε lies at most about this far (plus 1e-5 relative) above the least ε the
#: divergence allows.
SEARCH_TOLERANCE = 1e-6
#: The share of δ left to the other users' counts outside the range summed exactly.
TAIL_SHARE = 1e-3
#: Above this ε0 the numerical bounds report ε0 itself (always valid): the event thresholds need
#: 1 + e^ε exactly in floating point, lost from ε ≈ 36, and amplification there would need
#: n ≳ e^ε0 > 10^8 reports anyway.
NUMERICAL_EPS0_MAX = 20.0


@dataclass(frozen=True)
class VariationRatio:
    """Wang et al.'s (p, β, q) of a randomizer: ratio bound, total-variation bound, blanket ratio."""

    p: float
    beta: float
    q: float


def wang24_parameters(eps0: float, k: int | None = None) -> VariationRatio:
    """(p, β, q) of an ε0-LDP randomizer (Wang et al. 2024, the general LDP row of their table:
    β = (e^ε0 - 1)/(e^ε0 + 1), q = p = e^ε0), or, for the record only, what their table states for
    k-ary randomized response (β = (e^ε0 - 1)/(e^ε0 + k - 1)): no bound here uses the latter."""
    p = math.exp(eps0)
    beta = (p - 1) / (p + 1) if k is None else (p - 1) / (p + k - 1)
    return VariationRatio(p, beta, p)


def fmt21_closed_form(eps0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1 (the formula of the module docstring); ε0 itself outside its regime
    ε0 <= log(n / (16 log(2/δ))), where the theorem says nothing (shuffling never hurts: the
    shuffled reports are a post-processing of ε0-LDP reports, so ε0 always holds)."""
    _check(eps0, n, delta)
    if n < 16 * math.log(2 / delta) or eps0 > math.log(n / (16 * math.log(2 / delta))):
        return eps0
    e0 = math.exp(eps0)
    bound = math.log1p((e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta) / n) + 8 * e0 / n))
    return min(bound, eps0)


def hockey_stick(eps: float, n: int, p: float, alpha: float, r: float, tail: float = 0.0) -> float:
    """An upper bound on ``sum_(a,b) max(0, P(a,b) - e^eps Q(a,b))`` for the pair of count laws
    of the module docstring (ratio p, differing user's α, blanket rate r per symbol), exact when
    ``tail`` is 0.

    Given the total s = a + b, P/Q is increasing in a, so the optimal event is a > L(s) with
    ``L(s) = ((e^eps p - 1) α s + (e^eps - 1) G(s)) / (α (p - 1)(1 + e^eps))`` and
    ``G(s) = (1 - α - pα) r (n - s) / (1 - 2r)`` (solving P(a,b) = e^eps Q(a,b) with
    the multinomial ratios of adjacent counts). Summed over the others' count c ~ Bin(n-1, 2r)
    and their symbol-0 count A ~ Bin(c, 1/2): the differing user adds one to a (s = c + 1), one to
    b (s = c + 1) or nothing (s = c).
    """
    from scipy import stats  # on first use: importing scipy.stats costs ~1 s at start-up

    m = n - 1
    if tail > 0 and m > 0:
        lo = int(stats.binom.ppf(tail / 2, m, 2 * r))
        hi = int(stats.binom.isf(tail / 2, m, 2 * r))
        lo, hi = max(lo - 1, 0), min(hi + 1, m)
    else:
        lo, hi = 0, m
    c = np.arange(lo, hi + 1, dtype=np.float64)
    weight = stats.binom.pmf(c, m, 2 * r)
    # the mass left out, from the tails themselves (1 - sum would drown a tiny tail in rounding)
    outside = (float(stats.binom.cdf(lo - 1, m, 2 * r)) if lo > 0 else 0.0) + (
        float(stats.binom.sf(hi, m, 2 * r)) if hi < m else 0.0
    )
    ee = math.exp(eps)
    rest = max(0.0, 1.0 - alpha - p * alpha)

    def threshold(s: np.ndarray) -> np.ndarray:
        g = rest * r * (n - s) / (1 - 2 * r) if rest > 0 else 0.0
        return np.floor(((ee * p - 1) * alpha * s + (ee - 1) * g) / (alpha * (p - 1) * (1 + ee)))

    # Pr[A >= k] for A ~ Bin(c, 1/2): the survival function at k - 1.
    t1 = threshold(c + 1)
    geq_first0 = stats.binom.sf(t1 - 1, c, 0.5)  # differing user says 0: a = A + 1 > L <=> A >= t1
    geq_first1 = stats.binom.sf(t1, c, 0.5)  # says 1: a = A > L <=> A >= t1 + 1
    big_p = p * alpha * geq_first0 + alpha * geq_first1
    big_q = alpha * geq_first0 + p * alpha * geq_first1
    if rest > 0:
        geq_none = stats.binom.sf(threshold(c), c, 0.5)  # says neither: s = c, a = A
        big_p = big_p + rest * geq_none
        big_q = big_q + rest * geq_none
    return float(np.dot(weight, big_p - ee * big_q)) + outside


def _search(eps0: float, delta: float, divergence, hint: float | None = None) -> float:
    """The least ε in [0, ε0] with divergence(ε) <= δ, to SEARCH_TOLERANCE and never below it:
    Brent's method on log divergence(ε) - log δ brackets the crossing (from ``hint``, an ε
    expected to satisfy it, when it does), and the ε returned is one where divergence(ε) <= δ was
    checked (the (ε, δ) guarantee holds at exactly that ε)."""
    from scipy import optimize  # on first use: as scipy.stats above

    if divergence(0.0) <= delta:
        return 0.0
    hi = eps0
    if hint is not None and 0 < hint < eps0 and divergence(hint) <= delta:
        hi = hint
    elif divergence(eps0) > delta:  # only the tail share can put it there: ε0 always holds
        return eps0
    log_delta = math.log(delta)
    root = optimize.brentq(
        lambda e: math.log(max(divergence(e), 1e-300)) - log_delta, 0.0, hi, xtol=SEARCH_TOLERANCE / 4, rtol=1e-5
    )
    step = SEARCH_TOLERANCE / 4 + 1e-5 * root
    eps = min(root + step, hi)
    while eps < hi and divergence(eps) > delta:
        step *= 2
        eps = min(root + step, hi)
    return eps


def _check(eps0: float, n: int, delta: float) -> None:
    if not (eps0 > 0 and math.isfinite(eps0)):
        raise ValueError(f"eps0 must be a positive finite number, not {eps0!r}")
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), not {delta!r}")


@lru_cache(maxsize=4096)
def fmt21_numerical(eps0: float, n: int, delta: float) -> float:
    """FMT21's numerical bound (§5; their Theorem 3.2's clones: r = e^-ε0 / 2, α = 1/(e^ε0 + 1))."""
    _check(eps0, n, delta)
    if eps0 > NUMERICAL_EPS0_MAX:
        return eps0
    p = math.exp(eps0)
    tail = delta * TAIL_SHARE
    hint = fmt21_closed_form(eps0, int(n), delta)  # the numerical bound is tighter (FMT21 §5)
    return _search(eps0, delta, lambda e: hockey_stick(e, int(n), p, 1 / (p + 1), 1 / (2 * p), tail), hint)


@lru_cache(maxsize=4096)
def wang24_numerical(eps0: float, n: int, delta: float) -> float:
    """Wang et al.'s numerical variation-ratio bound with the general ε0-LDP parameters
    (:func:`wang24_parameters`): α = β/(p - 1) = 1/(e^ε0 + 1), r = αp/q = 1/(e^ε0 + 1): the
    differing user never falls back on the blanket (1 - α - pα = 0) and each other user is a
    clone of either input with probability 1/(e^ε0 + 1) (the stronger clone)."""
    _check(eps0, n, delta)
    if eps0 > NUMERICAL_EPS0_MAX:
        return eps0
    vr = wang24_parameters(eps0)
    alpha = vr.beta / (vr.p - 1)
    r = alpha * vr.p / vr.q
    tail = delta * TAIL_SHARE
    hint = fmt21_numerical(eps0, int(n), delta)  # the stronger clone is tighter still
    return _search(eps0, delta, lambda e: hockey_stick(e, int(n), vr.p, alpha, r, tail), hint)


def central_epsilon(bound: str, eps0: float, n: int, delta: float) -> float:
    """The central ε of ``bound`` (one of :data:`BOUNDS`) for n reports of an ε0-LDP randomizer."""
    if bound == FMT21_NUMERICAL:
        return fmt21_numerical(float(eps0), int(n), float(delta))
    if bound == FMT21_CLOSED_FORM:
        return fmt21_closed_form(float(eps0), int(n), float(delta))
    if bound == WANG24_NUMERICAL:
        return wang24_numerical(float(eps0), int(n), float(delta))
    raise ValueError(f"unknown shuffle bound {bound!r}; expected one of {', '.join(BOUNDS)}")
