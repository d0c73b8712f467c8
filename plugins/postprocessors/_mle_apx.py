"""MLE-Apx of [W20]: the approximate maximum-likelihood consistent estimate, two readings.

Both work on the observed support fractions ``y_v = c_v / n = q* + (p* - q*) f~_v`` and restrict
the estimate to a support set S (zero outside), starting from the positive estimates and
dropping the items that come out negative until none does. S strictly shrinks, so there are at
most d passes, each O(|S|) (a handful in practice).

- :func:`mle_apx_generic` (the paper's reading, any pure oracle): Gaussian model with the
  value-dependent variance (V-exact), ignoring the derivative of the log-variance term. Stationarity
  with a Lagrange multiplier for sum_S f = 1 gives "residual / variance = x" on S
  (docs/algorithms.md §2.9)::

      x   = (sum_S y - p* - (m-1) q*) / (p*(1-p*) + (m-1) q*(1-q*))
      f'_v = (y_v - q* - q*(1-q*) x) / ((p*-q*) + (p*(1-p*) - q*(1-q*)) x)     on S, |S| = m

  On S the map is affine in f~ ("zero the negatives, then shift and rescale the rest"); without
  the f_v term of the variance (p* + q* = 1) it is exactly Norm-Sub whenever the positive
  estimates sum to at least 1. Unlike Norm-Sub it never lifts a non-positive estimate.
- :func:`mle_apx_grr` (the authors' code for GRR): the exact multinomial MLE on S. With f = 0 off
  S and sum_S f = 1 the report mass on S is m q + p - q, so r_v = (y_v / sum_S y)(m q + p - q) and
  f'_v = (r_v - q)/(p - q).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _initial_support(f: np.ndarray) -> np.ndarray:
    support = np.flatnonzero(f > 0)
    if support.size == 0:
        # No positive estimate: start from the largest ones (the MLE on a one-item support puts
        # all mass there, as Norm-Sub does for an all-negative vector).
        support = np.flatnonzero(f == f.max())
    return support


def _shrink(y: np.ndarray, f: np.ndarray, solve_on: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, int]:
    """Solve on S, drop the negative results, repeat; ``solve_on(y_S)`` gives f' on S."""
    y = np.asarray(y, dtype=float)
    support = _initial_support(np.asarray(f, dtype=float))
    y_s = y[support]
    passes = 0
    while True:
        passes += 1
        values = solve_on(y_s)
        if values.min() >= 0:
            out = np.zeros_like(y)
            out[support] = values
            return out, passes
        # The values sum to 1 by construction, so some stay positive and S never empties.
        keep = values > 0
        support, y_s = support[keep], y_s[keep]


def mle_apx_generic(y: np.ndarray, f: np.ndarray, p: float, q: float) -> tuple[np.ndarray, int]:
    """[W20] MLE-Apx, generic pure-oracle form. Returns ``(f', passes)``."""
    a, b = p * (1 - p), q * (1 - q)

    def solve_on(y_s: np.ndarray) -> np.ndarray:
        m = y_s.size
        x = (y_s.sum() - p - (m - 1) * q) / (a + (m - 1) * b)
        denominator = (p - q) + (a - b) * x
        # Positive whenever 0 <= y <= 1 (real support fractions); it can be negative on a
        # one-item support from an all-negative vector, where the ratio is still exactly 1.
        if denominator == 0 or not np.isfinite(denominator):
            raise ValueError("MLE-Apx is singular here: is the estimate from this oracle (p*, q*)?")
        return (y_s - q - b * x) / denominator

    return _shrink(y, f, solve_on)


def mle_apx_grr(y: np.ndarray, f: np.ndarray, p: float, q: float) -> tuple[np.ndarray, int]:
    """[W20-code] MLE-Apx for GRR (multinomial MLE on a shrinking support). Returns ``(f', passes)``."""

    def solve_on(y_s: np.ndarray) -> np.ndarray:
        m = y_s.size
        mass = y_s.sum()
        # No report on S at all (only from a vector no GRR run gives): equal shares, the limit.
        share = y_s / mass if mass != 0 else np.full(m, 1.0 / m)
        return (share * (m * q + p - q) - q) / (p - q)

    return _shrink(y, f, solve_on)
