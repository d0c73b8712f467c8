"""Projection onto the simplex (plugins/numerics/simplex.py): the shift against bisection, sort-based = iterative."""

from __future__ import annotations

import numpy as np
import pytest
from support import random_vectors

from ldpbench_plugins.numerics.simplex import (
    project_to_simplex,
    project_to_simplex_iterative,
    simplex_shift,
    simplex_shift_iterative,
)

RNG = np.random.default_rng(20200223)


VECTORS = random_vectors(RNG)


def _bisection_shift(y: np.ndarray) -> float:
    """lambda with sum(max(y - lambda, 0)) = 1, by bisection (another independent route)."""
    lo, hi = y.min() - 1.0, y.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(y - mid, 0).sum() > 1.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_simplex_shift_equals_bisection():
    for f in VECTORS[::5]:
        assert simplex_shift(f) == pytest.approx(_bisection_shift(f), abs=1e-12)


def test_sort_based_and_iterative_projections_agree():
    for f in VECTORS:
        assert abs(simplex_shift(f) - simplex_shift_iterative(f)) <= 1e-12
        np.testing.assert_allclose(project_to_simplex(f), project_to_simplex_iterative(f), rtol=0, atol=1e-12)
    for total in (0.3, 7.0):
        f = RNG.normal(0, 1, 100)
        np.testing.assert_allclose(project_to_simplex(f, total).sum(), total, rtol=1e-12)
        np.testing.assert_allclose(project_to_simplex_iterative(f, total), project_to_simplex(f, total), atol=1e-12)
