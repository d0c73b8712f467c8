"""The built-in prior families of true item counts ([JG19] §III-C, Eq. 15-20).

Each family is a law on an integer support ``K = {lo, ..., hi}`` (``hi = n``; ``lo`` is 1 for the
power law, whose weight is infinite at 0, and 0 otherwise), in the **count** scale, with

- the unnormalized log weight, its support, mean and variance (of the discretized, truncated law);
- the mean-variance fit of [JG19] Eq. 17-20 (match the estimates' mean ``m``; two-parameter
  families also match ``Var(f) = V - sigma_s^2`` with ``V`` the population variance of the
  estimates);
- the maximum-likelihood fit under Gaussian noise of Eq. 16 (from
  :class:`~ldpbench_plugins.priors.PriorFamilyBase`).

When ``V - sigma_s^2 <= 0`` the estimates show no spread beyond the noise; the two-parameter
families then take a tiny scale (a prior that is nearly a point mass at ``m``). [JG19] does not say
what to do; Calibrate records a warning (docs/algorithms.md §3).

=============  ==================================  ==================  ============================
name           weight of count k                   parameters          mean-variance fit
=============  ==================================  ==================  ============================
power-law      k^-alpha on {1..n}                  alpha >= 0          mean equation, solved on K
zipf           k^-a on {1..n} (scipy's ``zipf``)   a >= 0              as power-law (same law)
gaussian       exp(-(k-mu)^2 / (2 tau^2))          mu, tau > 0         mu = m, tau^2 = V - sigma^2
laplace        exp(-|k-mu| / b)                    mu, b > 0           mu = m, 2 b^2 = V - sigma^2
poisson        lambda^k / k!                       lambda > 0          lambda = m
exponential    exp(-k / beta) (geometric)          beta > 0            mean equation, solved on K
=============  ==================================  ==================  ============================

Gaussian, Laplace and Poisson use the closed forms of the continuous/untruncated laws (the
discretization changes their moments negligibly once the scale is a few counts; docs/algorithms.md §8.1
asks for ``mu = m, tau^2 = V - sigma^2`` exactly); the power law and the exponential solve the
mean equation on the actual support to full precision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy  # scipy.special loads on first use (a lazy submodule), not with every command

from ldpbench import hookimpl

from ._base import NEGLIGIBLE, PriorFamilyBase, unimodal_effective_support

#: The scale a two-parameter family takes when the estimates show no spread beyond the noise.
TINY_SCALE = 1e-3
#: Largest power-law exponent the fit returns (the law is then a point mass at lo to 1e-15).
ALPHA_MAX = 64.0


def _spread(estimates: np.ndarray, noise_var: float) -> tuple[float, float]:
    """``(m, V - sigma^2)`` of [JG19] Eq. 19-20 (population variance, 1/d)."""
    x = np.asarray(estimates, dtype=float)
    m = float(x.mean())
    return m, float(((x - m) ** 2).mean()) - float(noise_var)


class PowerLaw(PriorFamilyBase):
    """Power law ``P(k) ∝ k^-alpha`` on {1, ..., n} ([JG19] Eq. 15; [W20]'s Power prior).

    Fitted by the mean equation ``sum k^(1-alpha) / sum k^-alpha = mean(f_hat)`` ([JG19] Eq. 17 for a
    one-parameter family; docs/algorithms.md §2.10), solved to full precision on the support. A mean
    at or below the support's lowest count has no solution: alpha is then ``ALPHA_MAX``; a mean
    above the uniform law's gives alpha = 0.
    """

    name = "power-law"
    parameter_names = ("alpha",)
    default_support_min = 1
    lowest_support_min = 1

    def log_weight(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        with np.errstate(divide="ignore"):
            return -float(theta[0]) * np.log(k)

    def rough_points(self, theta: Sequence[float]) -> tuple[float, ...]:
        return (0.0,)

    def smooth_scale(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        # k^-alpha varies by 2^alpha over a panel [k, 2k]: keep that moderate for steep laws.
        return np.asarray(k, dtype=float) * 2.0 / max(2.0, abs(float(theta[0])))

    def effective_support(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[int, int]:
        lo, hi = int(support[0]), int(support[1])
        alpha = float(theta[0])
        if lo < 1:
            raise ValueError("a power-law prior needs a support starting at 1 or above (k^-alpha is infinite at 0)")
        if alpha > 0:
            top = lo * math.exp(min(NEGLIGIBLE / alpha, 700.0))
            hi = min(hi, int(math.ceil(top)))
        return lo, max(lo, hi)

    def grad_log_weight(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        return -np.log(np.asarray(k, dtype=float))[None, :]

    def mle_bounds(self, support):
        return [(0.0, ALPHA_MAX)]

    def mean_at(self, alpha: float, support: tuple[int, int]) -> float:
        """``M(alpha)``: the mean of the law on ``support``."""
        return self.moments((alpha,), support)[0]

    def fit_alpha(self, mean: float, support: tuple[int, int]) -> tuple[float, bool]:
        """Solve ``M(alpha) = mean``; returns ``(alpha, clamped)``."""
        # M decreases in alpha; bracket by doubling from 2 (as [W20-code] does), then Brent.
        hi_a = 2.0
        while hi_a < ALPHA_MAX and self.mean_at(hi_a, support) > mean:
            hi_a = min(ALPHA_MAX, 2 * hi_a)
        return self.solve_mean(mean, lambda a: (a,), (0.0, hi_a), support)

    def fit_mean_variance(self, estimates, noise_var, support):
        m, _ = _spread(estimates, noise_var)
        return (self.fit_alpha(m, support)[0],)


class Zipf(PowerLaw):
    """Zipf law ``P(k) ∝ k^-a`` on {1, ..., n}: the power law under scipy's name and parameter
    (``scipy.stats.zipf(a)``, ``numpy.random.Generator.zipf(a)``)."""

    name = "zipf"
    parameter_names = ("a",)


class _LocationScale(PriorFamilyBase):
    """A unimodal family with parameters ``(location, scale > 0)``: mode at the location, and the
    optimizer works on ``(location, log scale)``."""

    def effective_support(self, theta, support):
        return unimodal_effective_support(self, theta, support, float(theta[0]))

    def to_unconstrained(self, theta):
        return np.array([float(theta[0]), math.log(float(theta[1]))])

    def from_unconstrained(self, u):
        return (float(u[0]), math.exp(float(u[1])))


class Gaussian(_LocationScale):
    """Discretized Gaussian ``P(k) ∝ exp(-(k - mu)^2 / (2 tau^2))`` on {0, ..., n} ([JG19] §III-C).

    Mean-variance fit: ``mu = m``, ``tau^2 = V - sigma_s^2`` (closed form, docs/algorithms.md §8.1).
    """

    name = "gaussian"
    parameter_names = ("mu", "tau")

    def log_weight(self, k, theta):
        mu, tau = float(theta[0]), float(theta[1])
        z = (np.asarray(k, dtype=float) - mu) / tau
        return -0.5 * z * z

    def smooth_scale(self, k, theta):
        return np.full(np.shape(k), float(theta[1]))

    def grad_log_weight(self, k, theta):
        mu, tau = float(theta[0]), float(theta[1])
        r = np.asarray(k, dtype=float) - mu
        return np.stack([r / tau**2, r * r / tau**3])

    def fit_mean_variance(self, estimates, noise_var, support):
        m, excess = _spread(estimates, noise_var)
        return (m, math.sqrt(excess) if excess > TINY_SCALE**2 else TINY_SCALE)


class Laplace(_LocationScale):
    """Discretized Laplace ``P(k) ∝ exp(-|k - mu| / b)`` on {0, ..., n} ([JG19] §III-C).

    Mean-variance fit: ``mu = m``, ``2 b^2 = V - sigma_s^2``.
    """

    name = "laplace"
    parameter_names = ("mu", "b")

    def log_weight(self, k, theta):
        mu, b = float(theta[0]), float(theta[1])
        return -np.abs(np.asarray(k, dtype=float) - mu) / b

    def rough_points(self, theta):
        return (float(theta[0]),)

    def grad_log_weight(self, k, theta):
        mu, b = float(theta[0]), float(theta[1])
        r = np.asarray(k, dtype=float) - mu
        return np.stack([np.sign(r) / b, np.abs(r) / b**2])

    def fit_mean_variance(self, estimates, noise_var, support):
        m, excess = _spread(estimates, noise_var)
        return (m, math.sqrt(excess / 2) if excess / 2 > TINY_SCALE**2 else TINY_SCALE)


class Poisson(PriorFamilyBase):
    """Poisson ``P(k) ∝ lambda^k / k!`` on {0, ..., n} ([JG19] §III-C).

    One parameter: the mean equation, ``lambda = m`` (the untruncated law's mean; truncation at n
    is negligible when lambda << n). A mean at or below 0 gives a tiny lambda.
    """

    name = "poisson"
    parameter_names = ("lambda",)

    def log_weight(self, k, theta):
        k = np.asarray(k, dtype=float)
        return k * math.log(float(theta[0])) - scipy.special.gammaln(k + 1.0)

    def rough_points(self, theta):
        return (-1.0,)  # the first pole of Gamma(k + 1)

    def smooth_scale(self, k, theta):
        # log P bends with curvature -psi'(k + 1) ~ -1/(k + 1/2)
        return 2.0 * np.sqrt(np.maximum(np.asarray(k, dtype=float), 0.0) + 0.5)

    def effective_support(self, theta, support):
        return unimodal_effective_support(self, theta, support, math.floor(float(theta[0])))

    def grad_log_weight(self, k, theta):
        return (np.asarray(k, dtype=float) / float(theta[0]))[None, :]

    def to_unconstrained(self, theta):
        return np.array([math.log(float(theta[0]))])

    def from_unconstrained(self, u):
        return (math.exp(float(u[0])),)

    def fit_mean_variance(self, estimates, noise_var, support):
        m, _ = _spread(estimates, noise_var)
        return (max(m, TINY_SCALE),)


class Exponential(PriorFamilyBase):
    """Exponential (geometric) law ``P(k) ∝ exp(-k / beta)`` on {0, ..., n}.

    One parameter: the mean equation solved on the support (the geometric law's mean is
    ``lo + 1 / (exp(1/beta) - 1)`` before truncation).
    """

    name = "exponential"
    parameter_names = ("beta",)

    def log_weight(self, k, theta):
        return -np.asarray(k, dtype=float) / float(theta[0])

    def effective_support(self, theta, support):
        lo, hi = int(support[0]), int(support[1])
        return lo, min(hi, lo + int(math.ceil(NEGLIGIBLE * float(theta[0]))) + 1)

    def grad_log_weight(self, k, theta):
        return (np.asarray(k, dtype=float) / float(theta[0]) ** 2)[None, :]

    def to_unconstrained(self, theta):
        return np.array([math.log(float(theta[0]))])

    def from_unconstrained(self, u):
        return (math.exp(float(u[0])),)

    def fit_mean_variance(self, estimates, noise_var, support):
        m, _ = _spread(estimates, noise_var)
        lo = int(support[0])
        if m <= lo + 1e-9:
            return (TINY_SCALE,)
        guess = 1.0 / math.log1p(1.0 / (m - lo))  # untruncated geometric law
        top = max(2.0 * guess, 10.0)
        while self.moments((top,), support)[0] < m and top < 1e15:
            top *= 4
        beta, _ = self.solve_mean(m, lambda b: (b,), (TINY_SCALE, top), support)
        return (beta,)


BUILTIN_FAMILIES = (PowerLaw, Zipf, Gaussian, Laplace, Poisson, Exponential)


@hookimpl
def ldpbench_register_prior_families(registry):
    for cls in BUILTIN_FAMILIES:
        registry.register(cls)
