"""The analysis behind reports/wang2017_oracles.md: [W17]'s closed forms and the crossover points.

[W17] Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017. Every pure protocol's approximate variance (the paper's Var*, which drops the
``f_v`` term of the exact variance, Eq. 2 of its Theorem 2) is ``q*(1-q*) / (n (p*-q*)^2)``; §4 works
it out per protocol:

=======  =============================================  ==========================================
oracle   n * Var* (fraction scale)                      from
=======  =============================================  ==========================================
grr      (d - 2 + e^eps) / (e^eps - 1)^2                 §4.1, Direct Encoding (DE)
she      8 / eps^2                                       §4.2, Summation with Histogram Encoding
the      (2 e^(eps t/2) - 1) / (1 + e^(eps(t-1/2))       §4.2, Thresholding with HE, minimised
         - 2 e^(eps t/2))^2                              over the threshold t in (1/2, 1)
sue      e^(eps/2) / (e^(eps/2) - 1)^2                   §4.3, basic RAPPOR
oue      4 e^eps / (e^eps - 1)^2                         §4.3, Optimized Unary Encoding
blh      (e^eps + 1)^2 / (e^eps - 1)^2                   §4.4, Binary Local Hashing
olh      4 e^eps / (e^eps - 1)^2                         §4.4, OLH at the real optimum g = e^eps + 1
=======  =============================================  ==========================================

Setting DE's Var* equal to OUE's gives the crossover ``d* = 3 e^eps + 2`` (the comparison closing §4): below it GRR has
the smaller variance. The full-domain MSE of a run also carries the ``f_v`` terms of the exact
variance; averaged over the domain they do not depend on the population (the frequencies sum to 1):
``(d - 2) / (d (e^eps - 1))`` for GRR and ``1/d`` for OUE, which moves the crossover of the *MSE*
below ``3 e^eps + 2`` (:func:`mse_crossover_domain`). HR (Acharya, Sun, Zhang, AISTATS 2019, high-privacy form) is not in [W17];
with ``p* = e^eps/(e^eps+1)`` and ``q* = 1/2`` its Var* equals BLH's.

The functions here are pure (NumPy in, numbers out) so that tests/unit/scripts/test_wang2017_analysis.py can
check them without a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq, minimize_scalar


def _the_var(eps: float) -> float:
    """THE's Var* at its best threshold in (1/2, 1) ([W17] §4.2)."""

    def var(t: float) -> float:
        a = math.exp(eps * t / 2)
        return (2 * a - 1) / (1 + math.exp(eps * (t - 0.5)) - 2 * a) ** 2

    return float(minimize_scalar(var, bounds=(0.5, 1.0), method="bounded", options={"xatol": 1e-9}).fun)


#: n * Var* of each [W17] protocol as a function of (eps, d); HR beside them (see module docstring).
PAPER_VAR: dict[str, Callable[[float, int], float]] = {
    "grr": lambda eps, d: (d - 2 + math.exp(eps)) / math.expm1(eps) ** 2,
    "she": lambda eps, d: 8 / eps**2,
    "the": lambda eps, d: _the_var(eps),
    "sue": lambda eps, d: math.exp(eps / 2) / math.expm1(eps / 2) ** 2,
    "oue": lambda eps, d: 4 * math.exp(eps) / math.expm1(eps) ** 2,
    "blh": lambda eps, d: (math.exp(eps) + 1) ** 2 / math.expm1(eps) ** 2,
    "olh": lambda eps, d: 4 * math.exp(eps) / math.expm1(eps) ** 2,
    "hr": lambda eps, d: (math.exp(eps) + 1) ** 2 / math.expm1(eps) ** 2,
}


def paper_mse(oracle: str, eps: float, d: int, n: int) -> float:
    """[W17]'s Var* of one item's estimate at n users (fraction scale), NaN for an oracle it lacks."""
    formula = PAPER_VAR.get(oracle)
    return formula(eps, d) / n if formula else float("nan")


def crossover_domain(eps: float) -> float:
    """[W17] §4 (comparison): GRR's Var* equals OUE's (and OLH's) at d = 3 e^eps + 2."""
    return 3 * math.exp(eps) + 2


def crossover_epsilon(d: int) -> float:
    """The same equality solved for eps: GRR has the smaller Var* above eps = ln((d - 2) / 3)."""
    return math.log((d - 2) / 3) if d > 5 else float("nan")


def mse_gap(eps: float, d: float) -> float:
    """n * (E[MSE of GRR] - E[MSE of OUE]) over the whole domain, f_v terms included (any population)."""
    e1 = math.expm1(eps)
    grr = (e1 + d - 1) / e1**2 + (d - 2) / (d * e1)
    oue = 4 * (e1 + 1) / e1**2 + 1 / d
    return grr - oue


def mse_crossover_domain(eps: float) -> float:
    """The d at which GRR's and OUE's expected full-domain MSE are equal (GRR better below)."""
    return float(brentq(lambda d: mse_gap(eps, d), 2.0, 1e12, xtol=1e-9))


def mse_crossover_epsilon(d: int) -> float:
    """The eps above which GRR's expected full-domain MSE is below OUE's; NaN beyond eps = 50."""
    low, high = 1e-3, 50.0
    if mse_gap(high, d) > 0:
        return float("nan")
    return float(brentq(lambda e: mse_gap(e, d), low, high, xtol=1e-12))


def sign_change(x: np.ndarray, log_ratio: np.ndarray) -> float:
    """Where ``log_ratio`` (log of GRR's error over another oracle's, along ``x``) first crosses 0.

    ``x`` must be increasing. Linear interpolation of ``log_ratio`` in ``log x`` between the two grid
    points around the first sign change; NaN when the sign never changes on the grid.
    """
    x, r = np.asarray(x, dtype=float), np.asarray(log_ratio, dtype=float)
    if x.size < 2 or np.any(np.diff(x) <= 0) or not np.all(np.isfinite(r)):
        raise ValueError("need an increasing grid of at least two points and finite ratios")
    flips = np.flatnonzero(np.sign(r[:-1]) != np.sign(r[1:]))
    if flips.size == 0:
        return float("nan")
    i = int(flips[0])
    lx0, lx1 = math.log(x[i]), math.log(x[i + 1])
    t = r[i] / (r[i] - r[i + 1])
    return float(math.exp(lx0 + t * (lx1 - lx0)))


def crossover(x: np.ndarray, grr: np.ndarray, other: np.ndarray, grr_wins_low: bool) -> tuple[float, str]:
    """The crossing of GRR's error curve with another oracle's along an increasing grid ``x``.

    :param grr_wins_low: True when GRR is expected to win at the low end of ``x`` (a domain axis:
        GRR wins for small d); False when it wins at the high end (a budget axis: large eps).
    :returns: ``(x*, "")``, or ``(nan, "below")`` / ``(nan, "above")`` when the crossing lies
        outside the grid (GRR loses, respectively wins, everywhere on a domain axis; on a budget
        axis "below" means GRR wins everywhere).
    """
    r = np.log(np.asarray(grr, dtype=float) / np.asarray(other, dtype=float))
    found = sign_change(x, r)
    if math.isfinite(found):
        return found, ""
    grr_everywhere = bool(np.all(r < 0))
    if grr_wins_low:
        return float("nan"), "above" if grr_everywhere else "below"
    return float("nan"), "below" if grr_everywhere else "above"


def bootstrap_crossover(
    x: np.ndarray,
    grr_repeats: list[np.ndarray],
    other_repeats: list[np.ndarray],
    grr_wins_low: bool,
    rng: np.random.Generator,
    draws: int = 400,
) -> tuple[float, float, int]:
    """A 95% percentile interval of the measured crossing, resampling each cell's repeats.

    ``grr_repeats[i]`` and ``other_repeats[i]`` are the per-repeat errors at ``x[i]`` (independent
    cells). Returns ``(low, high, missing)``: ``missing`` counts the draws whose crossing left the
    grid (they are left out of the interval, and reported).
    """
    found = []
    for _ in range(draws):
        g = np.array([rng.choice(v, size=v.size).mean() for v in grr_repeats])
        o = np.array([rng.choice(v, size=v.size).mean() for v in other_repeats])
        value, _ = crossover(x, g, o, grr_wins_low)
        if math.isfinite(value):
            found.append(value)
    if not found:
        return float("nan"), float("nan"), draws
    low, high = np.percentile(found, [2.5, 97.5])
    return float(low), float(high), draws - len(found)
