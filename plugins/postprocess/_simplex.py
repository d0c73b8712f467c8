"""Euclidean projection onto the probability simplex (shared by Norm-Sub and Blender).

argmin_x ||x - y||^2 subject to x >= 0, sum(x) = total. Sort-based closed form: with u = y sorted
descending and C_k its cumulative sums, rho = max{k : u_k - (C_k - total)/k > 0} and
lambda = (C_rho - total)/rho; x = max(y - lambda, 0). O(d log d).
([W20] §IV "Norm-Sub"; the algorithm is the classic one of Held, Wolfe & Crowder 1974.)
"""

from __future__ import annotations

import numpy as np


def simplex_shift(y: np.ndarray, total: float = 1.0) -> float:
    """The ``lambda`` with ``sum(max(y - lambda, 0)) == total``."""
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        raise ValueError("cannot project an empty vector")
    u = np.sort(y)[::-1]
    cumulative = np.cumsum(u) - total
    k = np.arange(1, y.size + 1)
    rho = int(np.nonzero(u - cumulative / k > 0)[0][-1]) + 1
    return float(cumulative[rho - 1] / rho)


def project_to_simplex(y: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``y`` onto ``{x >= 0, sum(x) = total}``."""
    y = np.asarray(y, dtype=float)
    return np.maximum(y - simplex_shift(y, total), 0.0)
