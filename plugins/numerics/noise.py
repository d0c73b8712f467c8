"""The oracle's noise level and the significance threshold, shared by Base-Cut, Calibrate and the
heavy-hitter metrics.

Pure protocols ([W17]; [JG19] §III-B, Eq. 14): the estimate of item v is its true frequency plus a
noise that is approximately Gaussian with mean 0 and the data-independent variance ("V-approx")

    count scale:    sigma_s^2 = n q* (1 - q*) / (p* - q*)^2
    fraction scale: sigma^2   =   q* (1 - q*) / (n (p* - q*)^2)

The significance threshold of [W17] that [JG19] Eq. (22) uses for OUE-Zero (and [W20] for Base-Cut)
is the Bonferroni-corrected one-sided test ``T = Phi^-1(1 - beta/d) * sigma`` with beta = 0.05
([W17] §4; [JG19] Eq. 22).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy  # scipy.special loads on first use (a lazy submodule), not with every command

from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate

#: [JG19] Eq. (22) / [W17]: the family-wise error level of the significance test.
DEFAULT_BETA = 0.05


def count_noise_variance(n: float, p_star: float, q_star: float) -> float:
    """V-approx in the count scale, ``n q*(1-q*) / (p*-q*)^2`` ([JG19] Eq. 14)."""
    return float(n) * q_star * (1.0 - q_star) / (p_star - q_star) ** 2


def significance_quantile(d: int, beta: float = DEFAULT_BETA) -> float:
    """``Phi^-1(1 - beta/d)``: e.g. 4.7145 for d = 41,270 and 4.5239 for d = 16,470."""
    if d < 1:
        raise ValueError("the domain size d must be >= 1")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), got {beta}")
    return float(scipy.special.ndtri(1.0 - beta / d))


def significance_threshold(sigma: float, d: int, beta: float = DEFAULT_BETA) -> float:
    """``Phi^-1(1 - beta/d) * sigma`` ([JG19] Eq. 22), in the scale of ``sigma``.

    E.g. OUE on Kosarak (count scale, sigma = 5,434.3 at epsilon = 1, d = 41,270): 25,620.0.
    """
    return significance_quantile(d, beta) * float(sigma)


def noise_sd(estimate: Estimate) -> float:
    """The estimate's per-item noise standard deviation (V-approx), **fraction scale**.

    Taken from ``Estimate.variance`` (which must be the same for every item) or, failing that,
    from ``p_star``/``q_star`` and ``n``. Raises ``ValueError`` when neither is available: the
    Gaussian noise model of [JG19] needs a pure protocol.
    """
    if estimate.variance is not None:
        v = np.asarray(estimate.variance, dtype=float)
        if v.size == 0:
            raise ValueError("the estimate has an empty variance vector")
        if not np.allclose(v, v.flat[0], rtol=1e-9, atol=0.0):
            raise ValueError(
                "the estimate's noise variance differs between items; the Gaussian noise model of "
                "[JG19] needs one noise level (a pure oracle with one epsilon)"
            )
        return math.sqrt(float(v.flat[0]))
    if estimate.p_star is not None and estimate.q_star is not None and estimate.n > 0:
        return math.sqrt(count_noise_variance(estimate.n, estimate.p_star, estimate.q_star)) / estimate.n
    raise ValueError(
        f"the estimate from '{estimate.mechanism or 'unknown'}' carries neither a noise variance nor "
        "p*/q*: a noise model is needed (use a pure oracle such as grr, olh, oue or hr)"
    )


def count_noise_sd(estimate: Estimate, who: str) -> float:
    """The oracle's noise standard deviation in the count scale, for plugin ``who``; it declines
    (:class:`~ldpbench.errors.NotApplicable`) an estimate whose oracle gives no noise level."""
    try:
        return noise_sd(estimate) * estimate.n
    except ValueError as exc:
        raise NotApplicable(f"{who}: {exc}") from None


def estimate_threshold(estimate: Estimate, beta: float = DEFAULT_BETA) -> float:
    """The significance threshold of this estimate's oracle, **fraction scale** (times n for counts)."""
    return significance_threshold(noise_sd(estimate), estimate.d, beta)


def epsilon_for_noise(
    target: float,
    n: float,
    pq: Callable[[float], tuple[float, float]],
    quantity: str = "sd",
    bracket: tuple[float, float] = (1e-3, 50.0),
) -> float:
    """The epsilon at which the count-scale noise ``quantity`` ("sd" or "variance") equals ``target``.

    ``pq(epsilon) -> (p*, q*)`` gives the oracle's support probabilities. Used to decode published
    noise levels: [JG19] §IV-B reports OUE noise on Kosarak as "variance 5434"; solving for the
    standard deviation gives epsilon = 1.000 (the paper's setting) and for the variance 8.68, outside
    the paper's range, so 5434 is a standard deviation.
    """
    if quantity not in ("sd", "variance"):
        raise ValueError("quantity must be 'sd' or 'variance'")

    def level(eps: float) -> float:
        var = count_noise_variance(n, *pq(eps))
        return math.sqrt(var) if quantity == "sd" else var

    def gap(eps: float) -> float:
        return math.log(level(eps)) - math.log(target)

    from scipy.optimize import brentq  # here, not at import: scipy.optimize costs every command ~0.4 s

    return float(brentq(gap, *bracket, xtol=1e-12, rtol=1e-12))
