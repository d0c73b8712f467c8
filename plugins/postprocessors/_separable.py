"""The maximizer of a separable likelihood on the simplex, solved directly instead of by iteration.

Two kinds of budget group have a log-likelihood that is a sum of one-dimensional terms in theta:

- the **per-item** composite likelihood of support counts (``_likelihood``: ``c_gv`` a sum of
  ``n_g`` Bernoulli bits, ``r_gv = q_g + (p_g - q_g) theta_v``): ones ``c_gv``, zeros ``n_g - c_gv``;
- the **full** likelihood of randomized response (GRR, k-RR, and the identity channel of
  eps = inf users): a report of y has probability ``q_g + (p_g - q_g) theta_y`` on the simplex
  (``p_g + (d - 1) q_g = 1``), so ``sum_y h_gy log(q_g + (p_g - q_g) theta_y)`` is the same term
  with ones ``h_gy`` and no zeros.

Any mix of them sums to

    L(theta) = sum_v l_v(theta_v),   l_v(t) = sum_g a_gv log r_gv(t) + b_gv log(1 - r_gv(t)),

(``a`` the ones, ``b`` the zeros), so the KKT conditions of ``max L`` on the simplex couple the
items only through the multiplier ``lam`` of ``sum(theta) = 1``: ``theta_v(lam)`` maximizes
``l_v(t) - lam t`` over ``[0, 1]``, i.e. ``theta_v = 0`` where ``l_v'(0) <= lam`` and
``l_v'(theta_v) = lam`` elsewhere, and ``lam`` solves ``sum_v theta_v(lam) = 1`` (the sum decreases
in ``lam``). For one group the inner equation is a quadratic in ``r``::

    a / r - b / (1 - r) = mu   <=>   mu r^2 - (mu + a + b) r + a = 0,   mu = lam / (p - q),

with its root in ``[0, 1]`` in closed form (``r = a / mu`` when ``b = 0``: the closed form of
randomized response's MLE, Pinzon et al., AAAI 2026, which ``mle-rr`` computes by a sort); with
several groups it is solved by Newton's method inside a bracket on each item at once. The outer
equation is solved by regula falsi (Illinois) on ``lam``, inside a bracket. This is the fixed point
that IBU's iteration approaches (the same maximizer: the likelihood is concave, and IBU never
leaves the simplex), reached in O(d) work per step on the multiplier rather than after up to 10^4
maps of IBU, which crawl when the domain is large and most items sit on the boundary (d = 41,270:
the cap).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._em import EMResult, Group, Likelihood
from ._likelihood import SupportBitsChannel

#: Bisection steps: the interval halves each time, so 200 steps reach the last bit of a double
#: from any bracket the data can produce.
MAX_STEPS = 200


def separable(groups: Sequence[Group]) -> bool:
    """Whether every group's likelihood is separable (per-item, or randomized response's full one):
    the direct solve applies."""
    return bool(groups) and all(isinstance(g.channel, SupportBitsChannel) or g.grr_like for g in groups)


def per_item_mle(groups: Sequence[Group]) -> EMResult:
    """The maximizer of the summed per-item likelihoods on the simplex (module docstring), with the
    same diagnostics as an EM run: ``iterations`` counts the steps on the multiplier."""
    stats = [_statistics(g) for g in groups]
    d = stats[0][3].size
    inner = _one_group if len(stats) == 1 else _many_groups

    last: list[np.ndarray] = []

    def total(lam: float) -> tuple[float, np.ndarray]:
        # several groups: Newton from the previous multiplier's answer (theta_v(lam) is monotone)
        theta = inner(stats, lam) if len(stats) == 1 else inner(stats, lam, last[-1] if last else None)
        last[:] = [theta]
        return float(theta.sum()), theta

    # Bracket lam: the sum is at most 1 at hi (items at 0 where l_v'(0) <= hi) and at least 1 at
    # lo (items at 1 where l_v'(1) >= lo); widen until it holds, as an item whose count meets
    # r = 0 or r = 1 has an infinite slope there.
    slopes = np.concatenate([_slope(stats, np.zeros(d)), _slope(stats, np.ones(d))])
    scale = float(np.max(np.abs(slopes[np.isfinite(slopes)]), initial=1.0)) + 1.0
    hi, lo = scale, -scale
    while total(hi)[0] > 1.0 and hi < 1e300:
        hi *= 4.0
    while total(lo)[0] < 1.0 and lo > -1e300:
        lo *= 4.0
    # Regula falsi with the Illinois modification on h(lam) = sum theta(lam) - 1 (decreasing,
    # continuous): superlinear, and the bracket [lo, hi] always holds the root.
    steps = 0
    h_lo, h_hi = total(lo)[0] - 1.0, total(hi)[0] - 1.0
    side = 0
    theta = np.full(d, 1.0 / d)
    while steps < MAX_STEPS and h_lo > 0 > h_hi:
        mid = hi - h_hi * (hi - lo) / (h_hi - h_lo)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # the bracket is one ulp wide
            break
        s_mid, theta = total(mid)
        steps += 1
        h_mid = s_mid - 1.0
        if abs(h_mid) <= 4 * np.finfo(float).eps:
            hi, h_hi = mid, h_mid
            break
        if h_mid > 0:
            lo, h_lo = mid, h_mid
            if side == -1:
                h_hi *= 0.5
            side = -1
        else:
            hi, h_hi = mid, h_mid
            if side == 1:
                h_lo *= 0.5
            side = 1
    _, theta = total(hi)  # sum <= 1 side: renormalizing moves it up by at most an ulp's effect
    theta = theta / theta.sum() if theta.sum() > 0 else np.full(d, 1.0 / d)
    m, loglik = Likelihood(groups).mean_gradient(theta)
    return EMResult(theta=theta, iterations=steps, converged=True, loglik=loglik, m=m)


Stats = tuple[float, float, np.ndarray, np.ndarray]


def _statistics(group: Group) -> Stats:
    """``(p, q, n, c)`` of a group: its constants, the ones plus zeros ``n`` and the ones ``c`` per
    item (per-item: ``n`` users, ``c`` the support counts; randomized response: ``n = c = h``, the
    report histogram, as no report counts against an item)."""
    ch = group.channel
    if isinstance(ch, SupportBitsChannel):
        d = ch.n_items
        c = np.asarray(group.histogram[:d], dtype=float)
        # the channel's mass is n d (one virtual report per user and item)
        return ch.p, ch.q, np.full(d, float(group.n) / d), c
    p, q = group.rr
    h = np.asarray(group.histogram, dtype=float)
    return p, q, h, h


def _slope(stats: Sequence[Stats], theta: np.ndarray) -> np.ndarray:
    """``l_v'(theta_v)`` for every item (``+inf`` where a count meets ``r = 0``, ``-inf`` at ``r = 1``)."""
    out = np.zeros(theta.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q, n, c in stats:
            r = q + (p - q) * theta
            ones = np.where(c > 0, c / r, 0.0)
            zeros = np.where(n - c > 0, (n - c) / (1.0 - r), 0.0)
            out += (p - q) * (ones - zeros)
    return out


def _one_group(stats: Sequence[Stats], lam: float) -> np.ndarray:
    """``theta_v(lam)`` for one group: the root in [0, 1] of ``mu r^2 - (mu + n) r + c = 0``."""
    ((p, q, n, c),) = stats
    mu = lam / (p - q)
    if mu == 0.0:
        # l_v' = 0 at r = c / n; an item nobody reported (randomized response, n = 0) has l_v = 0
        r = np.divide(c, n, out=np.zeros_like(c), where=n > 0)
    else:
        b = mu + n
        disc = np.sqrt(np.maximum(b * b - 4.0 * mu * c, 0.0))
        # The root in [0, 1] without cancellation: 2c / (b + disc) when b > 0, else (b - disc) / 2mu.
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(b > 0, (2.0 * c) / (b + disc), (b - disc) / (2.0 * mu))
    return np.clip((r - q) / (p - q), 0.0, 1.0)


def _many_groups(stats: Sequence[Stats], lam: float, start: np.ndarray | None = None) -> np.ndarray:
    """``theta_v(lam)`` for several groups: Newton's method on each item's decreasing ``l_v'``,
    kept inside a bracket that every step narrows (a step leaving it bisects instead)."""
    d = stats[0][3].size
    lo, hi = np.zeros(d), np.ones(d)
    at_zero = _slope(stats, lo) <= lam
    at_one = _slope(stats, hi) >= lam
    theta = np.full(d, 0.5) if start is None else np.clip(start, 1e-12, 1 - 1e-12)
    for _ in range(MAX_STEPS):
        value = _slope(stats, theta) - lam
        lo = np.where(value > 0, theta, lo)
        hi = np.where(value > 0, hi, theta)
        step = theta - value / _curvature(stats, theta)
        inside = (step > lo) & (step < hi) & np.isfinite(step)
        new = np.where(inside, step, 0.5 * (lo + hi))
        # items whose answer is an end point (at_zero, at_one) are set below, not iterated to it
        settled = (np.abs(new - theta) <= 1e-13 * theta) | at_zero | at_one
        done = bool(np.all(settled))
        theta = new
        if done:
            break
    theta[at_zero] = 0.0
    theta[at_one & ~at_zero] = 1.0
    return theta


def _curvature(stats: Sequence[Stats], theta: np.ndarray) -> np.ndarray:
    """``l_v''(theta_v)`` (negative: each term is concave)."""
    out = np.zeros(theta.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q, n, c in stats:
            r = q + (p - q) * theta
            out -= (p - q) ** 2 * (np.where(c > 0, c / r**2, 0.0) + np.where(n - c > 0, (n - c) / (1.0 - r) ** 2, 0.0))
    return out
