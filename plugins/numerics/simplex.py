"""Euclidean projection onto the probability simplex (shared by Norm-Sub, Power, EM and Blender).

argmin_x ||x - y||^2 subject to x >= 0, sum(x) = total; the solution is x = max(y - lambda, 0)
for the unique lambda that makes the sum right ([W20] §IV "Norm-Sub").

Two algorithms, equal up to round-off (the tests check 1e-12):

- :func:`simplex_shift` — sort-based closed form: with u = y sorted descending and C_k its
  cumulative sums, rho = max{k : u_k - (C_k - total)/k > 0} and lambda = (C_rho - total)/rho.
  O(d log d). (Held, Wolfe & Crowder 1974.) The default.
- :func:`simplex_shift_iterative` — the active-set iteration [W20]'s authors run ("set the
  negatives to 0, spread the missing mass evenly over the positives, repeat"; Michelot 1986):
  lambda only grows, so an item once dropped stays dropped; at most d rounds of O(d) each, a
  handful in practice.
"""

from __future__ import annotations

import numpy as np


def _check(y: np.ndarray, total: float) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size == 0:
        raise ValueError("can only project a non-empty one-dimensional vector")
    if not total > 0:
        raise ValueError(f"the simplex total must be positive, got {total}")
    return y


def simplex_shift(y: np.ndarray, total: float = 1.0) -> float:
    """The ``lambda`` with ``sum(max(y - lambda, 0)) == total`` (sort-based, O(d log d))."""
    y = _check(y, total)
    u = np.sort(y)[::-1]
    cumulative = np.cumsum(u) - total
    k = np.arange(1, y.size + 1)
    # k = 1 always qualifies (u_1 - (u_1 - total) = total > 0), so rho >= 1.
    rho = int(np.nonzero(u - cumulative / k > 0)[0][-1]) + 1
    return float(cumulative[rho - 1] / rho)


def simplex_shift_iterative(y: np.ndarray, total: float = 1.0) -> float:
    """The same ``lambda`` by the active-set iteration (O(d) per round, at most d rounds)."""
    y = _check(y, total)
    active = y
    while True:
        lam = (active.sum() - total) / active.size
        keep = active > lam
        if keep.all():
            return float(lam)
        # Some item is at or below lambda: drop it; lambda then cannot decrease.
        active = active[keep]


def project_to_simplex(y: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``y`` onto ``{x >= 0, sum(x) = total}`` (sort-based)."""
    y = np.asarray(y, dtype=float)
    return np.maximum(y - simplex_shift(y, total), 0.0)


def project_to_simplex_iterative(y: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``y`` onto the simplex by the active-set iteration."""
    y = np.asarray(y, dtype=float)
    return np.maximum(y - simplex_shift_iterative(y, total), 0.0)
