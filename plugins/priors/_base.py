"""The base class of the built-in prior families (and a convenient one for third-party families).

:class:`PriorFamilyBase` fills in what :class:`ldpbench.types.PriorFamily` leaves open, using the
posterior engine of Calibrate (``ldpbench_plugins.numerics.posterior``):

- :meth:`log_normalizer` and :meth:`moments` by the engine's sums (quadrature where the family is
  smooth, exact integers elsewhere) instead of a sum over every integer of ``{0..n}``;
- :meth:`fit_mle`: maximum likelihood under Gaussian noise ([JG19] Eq. 16) with L-BFGS-B in the
  family's unconstrained coordinates, started from the mean-variance solution. [JG19] uses
  gradient ascent without details; the gradient here is exact when the family provides
  :meth:`grad_log_weight` (d/dtheta log L = sum_i E[g(f) | x_i] - d E_prior[g]) and a central
  difference otherwise. During the search the likelihood and its gradient are interpolated from
  Chebyshev nodes in x (``interpolated_posterior``, exact to ~1e-13 per item); the result is
  never worse (in likelihood) than the starting point.

A subclass implements ``log_weight`` and ``fit_mean_variance`` and, optionally, the hints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import scipy  # scipy.optimize loads on first use (a lazy submodule), not with every command

from ldpbench.types import PriorFamily
from ldpbench_plugins.numerics.posterior import build_rule, interpolated_posterior, prior_sums

#: log of the weight ratio beyond which counts are ignored (see PriorFamily.effective_support).
NEGLIGIBLE = 700.0


class PriorFamilyBase(PriorFamily):
    """A prior family whose sums, moments and maximum-likelihood fit come from the posterior engine."""

    smooth = True

    def __init__(self, **params):
        super().__init__(**params)
        self._sums: dict = {}

    # -- sums over the support ------------------------------------------------------------------
    def _prior_sums(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[float, float, float]:
        key = (tuple(float(t) for t in theta), int(support[0]), int(support[1]))
        hit = self._sums.get(key)
        if hit is None:
            if len(self._sums) > 256:
                self._sums.clear()
            hit = self._sums[key] = prior_sums(self, theta, support)
        return hit

    def log_normalizer(self, theta: Sequence[float], support: tuple[int, int]) -> float:
        return self._prior_sums(theta, support)[0]

    def moments(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[float, float]:
        _, mean, var = self._prior_sums(theta, support)
        return mean, var

    def prior_expectation(self, g: Callable[[np.ndarray], np.ndarray], theta: Sequence[float], support) -> np.ndarray:
        """``E_prior[g(k)]`` for a vector-valued ``g`` (rows = components)."""
        rule = build_rule(self, theta, self.effective_support(theta, support), math.inf)
        w = np.exp(rule.logw - rule.logw.max())
        vals = np.atleast_2d(g(rule.k))
        return (vals * w).sum(axis=1) / w.sum()

    # -- maximum likelihood ---------------------------------------------------------------------
    def grad_log_weight(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        """``d log_weight / d theta_j`` at ``k``, shape ``(len(theta), len(k))`` (optional)."""
        raise NotImplementedError

    def mle_bounds(self, support: tuple[int, int]) -> list[tuple[float | None, float | None]] | None:
        """Bounds on the unconstrained coordinates for L-BFGS-B (None: unbounded)."""
        return None

    def _has_grad(self) -> bool:
        return type(self).grad_log_weight is not PriorFamilyBase.grad_log_weight

    def mle_objective(self, x: np.ndarray, sigma: float, support: tuple[int, int]) -> Callable:
        """``u -> (-mean log-likelihood, gradient in u)`` for the optimizer."""
        d = x.size
        analytic = self._has_grad()

        def value(u: np.ndarray) -> tuple[float, np.ndarray | None]:
            theta = self.from_unconstrained(u)
            post = interpolated_posterior(x, sigma, self, theta, support, grad=analytic)
            f = -float(post.log_marginal.sum()) / d
            if not analytic:
                return f, None
            g_theta = -(
                post.expectations.mean(axis=1)
                - self.prior_expectation(lambda k: self.grad_log_weight(k, theta), theta, support)
            )
            # chain rule through the (cheap, smooth) parameter transform
            jac = np.empty((len(theta), len(u)))
            for j in range(len(u)):
                h = 1e-6 * max(1.0, abs(u[j]))
                up, um = u.copy(), u.copy()
                up[j] += h
                um[j] -= h
                jac[:, j] = (np.asarray(self.from_unconstrained(up)) - np.asarray(self.from_unconstrained(um))) / (
                    2 * h
                )
            return f, jac.T @ g_theta

        def fun(u: np.ndarray) -> tuple[float, np.ndarray]:
            u = np.asarray(u, dtype=float)
            try:
                f, g = value(u)
            except (ValueError, FloatingPointError, OverflowError, ZeroDivisionError):
                return math.inf, np.zeros_like(u)
            if g is None:
                g = np.empty_like(u)
                for j in range(u.size):
                    h = 1e-5 * max(1.0, abs(u[j]))
                    up, um = u.copy(), u.copy()
                    up[j] += h
                    um[j] -= h
                    g[j] = (value(up)[0] - value(um)[0]) / (2 * h)
            if not math.isfinite(f):
                return math.inf, np.zeros_like(u)
            return f, g

        return fun

    def fit_mle(self, estimates: np.ndarray, noise_var: float, support: tuple[int, int]) -> tuple[float, ...]:
        x = np.asarray(estimates, dtype=float).ravel()
        sigma = math.sqrt(noise_var)
        start = self.fit_mean_variance(x, noise_var, support)
        u0 = np.asarray(self.to_unconstrained(start), dtype=float)
        fun = self.mle_objective(x, sigma, support)
        f0, _ = fun(u0)
        res = scipy.optimize.minimize(
            fun,
            u0,
            jac=True,
            method="L-BFGS-B",
            bounds=self.mle_bounds(support),
            options={"maxiter": 200, "ftol": 1e-13, "gtol": 1e-9},
        )
        if not (np.all(np.isfinite(res.x)) and res.fun <= f0):
            return tuple(float(t) for t in start)
        return tuple(float(t) for t in self.from_unconstrained(res.x))

    # -- helpers for subclasses ------------------------------------------------------------------
    def solve_mean(
        self,
        target: float,
        make_theta: Callable[[float], tuple[float, ...]],
        bracket: tuple[float, float],
        support: tuple[int, int],
    ) -> tuple[float, bool]:
        """Solve ``E_theta[f] = target`` for a one-parameter family whose mean is monotone in the
        parameter over ``bracket``; returns ``(parameter, clamped)`` where ``clamped`` says the
        target was out of reach and the nearer end of the bracket was returned."""
        a, b = bracket

        def gap(p: float) -> float:
            return self.moments(make_theta(p), support)[0] - target

        ga, gb = gap(a), gap(b)
        if ga == 0:
            return a, False
        if gb == 0:
            return b, False
        if (ga > 0) == (gb > 0):
            return (a if abs(ga) < abs(gb) else b), True
        root = scipy.optimize.brentq(gap, a, b, xtol=1e-14, rtol=1e-15, maxiter=500)
        return float(root), False


def unimodal_effective_support(
    family: PriorFamily, theta: Sequence[float], support: tuple[int, int], mode: float
) -> tuple[int, int]:
    """Counts whose weight is within ``exp(-NEGLIGIBLE)`` of the weight at ``mode`` (clipped to the
    support), for a family whose log weight decreases away from its mode. Bisection per side."""
    lo, hi = int(support[0]), int(support[1])
    m = float(min(max(mode, lo), hi))
    top = float(family.log_weight(np.asarray([m]), theta)[0])
    limit = top - NEGLIGIBLE

    def edge(direction: int) -> int:
        end = lo if direction < 0 else hi
        if float(family.log_weight(np.asarray([float(end)]), theta)[0]) >= limit:
            return end
        inside, outside = m, float(end)
        for _ in range(200):
            mid = 0.5 * (inside + outside)
            if float(family.log_weight(np.asarray([mid]), theta)[0]) >= limit:
                inside = mid
            else:
                outside = mid
            if abs(outside - inside) < 0.5:
                break
        return int(math.floor(outside)) if direction < 0 else int(math.ceil(outside))

    a, b = edge(-1), edge(+1)
    return max(lo, min(a, math.floor(m))), min(hi, max(b, math.ceil(m)))
