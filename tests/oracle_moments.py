"""Per-item checks of an oracle's mean and variance from repeated estimates, shared by the d = 256
moment tests of tests/statistical (docs/algorithms.md §8.2).

From T repeated estimates ``x[t, v]`` of the true frequencies ``f`` (one fixed population), with the
oracle's own variance formula ``V_v`` for one estimate, :func:`per_item_checks` makes three checks,
each with false-alarm probability at most :data:`ALPHA` = 1e-7 for a correct oracle:

- **max |z|**: ``z_v = (mean_t x[t, v] - f_v) / sqrt(V_v / T)``, every ``|z_v|`` at most the
  Bonferroni limit ``norm.isf(ALPHA / 2d)`` (6.26 at d = 256): catches a bias on a few items.
- **chi-square of the means**: ``X = sum_v z_v^2`` against the ``chi2_d`` quantile at ``1 - ALPHA``
  (391.5 at d = 256): catches a bias spread over many items, e.g. a constant shift of 0.73 sd of the
  mean on every item, where max |z| needs 6.26 sd. Given the estimates' exact covariance ``C`` (PGR's
  hyperplanes correlate its items), ``X = T e^T C^-1 e`` with ``e`` the mean errors, again ``chi2_d``.
- **variance ratio**: ``R = mean_v s_v^2 / V_v`` within 7.8 of its standard deviations of 1
  (:func:`ldpbench.testing.stats.variance_ratio_test`; with ``C`` the standard deviation counts the
  correlations, ``sqrt(2 sum_vw rho_vw^2 / (T - 1)) / d``).

Why these null laws hold: the mean over T repeats of a sum of n >= 2,000 independent users is normal
to far better than the tails used here, and the items' estimates are independent (OUE, SUE, THE,
SHE: independent bits or coordinates; OLH, BLH: pairwise independent supports under a fresh hash per
user) or correlated by O(1/d) (SS's fixed subset size, -1/(d - 1); CMS and HCMS, about 1/m through
bucket collisions), which changes E[X] not at all and its variance by ``2 sum_{v != w} rho_vw^2``, about
2 against 2d = 512; PGR's correlations (sum_{v != w} rho^2 = 102 at eps = 4) are handled exactly
through C. The excess kurtosis of a support count, at most 1/(n q*(1 - q*)) = 0.03 (OUE at eps = 4,
n = 2,000), widens the standard deviation of R by under 1%.

Why they are more powerful than the full-domain MSE alone: a bias b_v enters the mean MSE as
``mean_v b_v^2`` against a noise of ``sqrt(2/d) V / sqrt(T)``, but X as ``T sum_v b_v^2 / V_v`` against
``sqrt(2d)``: sqrt(T) times the power at equal n. So the per-user path, whose cost is O(n d) per
repeat, runs with 10x fewer users than the issue's n = 20,000 and still catches a wrong perturb at
least as surely (the figures are in each test module).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as st

from ldpbench.engine.simulate import simulate
from ldpbench.testing.stats import StatResult, variance_ratio_test, z_test

#: False-alarm probability of each check (per oracle and eps) for a correct oracle.
ALPHA = 1e-7


def trials(oracle, counts: np.ndarray, rng: np.random.Generator, path: str, t: int) -> np.ndarray:
    """``(t, d)`` estimated frequencies from ``t`` independent runs of the engine's ``simulate``."""
    return np.array([simulate(oracle, counts, rng, path).frequencies for _ in range(t)])


def z_limit(d: int, alpha: float = ALPHA) -> float:
    """Per-item |z| limit with family-wise two-sided tail ``alpha`` over ``d`` items (Bonferroni)."""
    return float(st.norm.isf(alpha / (2 * d)))


def mean_chi2_test(
    samples: np.ndarray,
    truth: np.ndarray,
    variance: np.ndarray,
    covariance: np.ndarray | None = None,
    *,
    alpha: float = ALPHA,
    label: str = "",
) -> StatResult:
    """``X = T e^T C^-1 e`` (``C = diag(variance)`` unless ``covariance`` is given), ``e`` the mean
    errors over the T rows of ``samples``: pass if X is below the ``chi2_d`` quantile at ``1 - alpha``."""
    x = np.asarray(samples, dtype=float)
    t = x.shape[0]
    e = x.mean(axis=0) - np.asarray(truth, dtype=float)
    if covariance is None:
        stat = float(t * np.sum(e**2 / np.asarray(variance, dtype=float)))
    else:
        stat = float(t * e @ np.linalg.solve(np.asarray(covariance, dtype=float), e))
    dof = e.size
    limit = float(st.chi2.isf(alpha, dof))
    p = float(st.chi2.sf(stat, dof))
    msg = f"X = sum of squared z of the means = {stat:.1f} on {dof} dof (limit {limit:.1f}), p = {p:.3g}, T = {t}"
    return StatResult(f"chi-square of the means{label}", stat <= limit, stat, msg)


def correlation_sd_of_ratio(covariance: np.ndarray, t: int) -> float:
    """Standard deviation of ``R = mean_v s_v^2 / V_v`` over ``t`` normal repeats with covariance ``C``:
    ``sqrt(2 sum_vw rho_vw^2 / (t - 1)) / d``."""
    sd = np.sqrt(np.diag(covariance))
    rho = covariance / np.outer(sd, sd)
    return math.sqrt(2 * float(np.sum(rho**2)) / (t - 1)) / covariance.shape[0]


def per_item_checks(
    samples: np.ndarray,
    truth: np.ndarray,
    variance: np.ndarray,
    covariance: np.ndarray | None = None,
    *,
    label: str = "",
) -> list[StatResult]:
    """The three checks of the module docstring, as results (call ``.check()`` on each)."""
    d = np.asarray(samples).shape[1]
    tol = None
    if covariance is not None:
        tol = 7.8 * correlation_sd_of_ratio(covariance, np.asarray(samples).shape[0])
    return [
        z_test(samples, truth, variance, limit=z_limit(d), label=label),
        mean_chi2_test(samples, truth, variance, covariance, label=label),
        variance_ratio_test(samples, variance, tol=tol, label=label),
    ]


# ----------------------------------------------------------------------------------------------
# Power against a planted error, computed exactly (the tests that keep the designs honest)
# ----------------------------------------------------------------------------------------------


def pure_protocol_moments(
    counts: np.ndarray, p: float, q: float, p_star: float, q_star: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(bias, variance)`` per item of the estimate ``(c_v/n - q*)/(p* - q*)`` when each user's report
    supports her own item w.p. ``p`` and any other item w.p. ``q``, independently across users (a
    pure protocol whose perturb is wrong: ``p, q`` instead of ``p*, q*``)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    mean = counts * p + (n - counts) * q
    var = counts * p * (1 - p) + (n - counts) * q * (1 - q)
    scale = n * (p_star - q_star)
    return (mean / n - q_star) / (p_star - q_star) - counts / n, var / scale**2


def chi2_miss_probability(
    bias: np.ndarray,
    variance: np.ndarray,
    formula: np.ndarray,
    t: int,
    covariance: np.ndarray | None = None,
    alpha: float = ALPHA,
) -> float:
    """P(the chi-square of the means passes) when the estimates have per-item ``bias`` and true
    ``variance`` but are judged against ``formula`` (and ``covariance``, if given): X is close to
    ``r chi2_d(lambda)`` with ``r = mean(variance / formula)`` and ``lambda = t sum bias^2 / variance``
    (``t bias^T C^-1 bias / r`` with a covariance); the other checks can only add to the power."""
    d = bias.size
    r = float(np.mean(variance / formula))
    if covariance is None:
        lam = float(t * np.sum(bias**2 / variance))
    else:
        lam = float(t * bias @ np.linalg.solve(covariance, bias)) / r
    return float(st.ncx2.cdf(st.chi2.isf(alpha, d) / r, d, lam))
