"""Helpers the multidimensional solutions' tests share (tests/unit/plugins/protocols/test_spl.py,
test_smp.py, test_rsfd.py): a small tuple population and the moments of a solution's estimates."""

from __future__ import annotations

import numpy as np

from ldpbench.types.attributes import Attributes, tuple_population

SIZES = (3, 5)


def population(n: int = 3000):
    """``n`` users with two dependent attributes over [3] and [5] (skewed marginals, fixed seed)."""
    rng = np.random.default_rng(20261127)
    x = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    y = np.minimum(x + rng.choice(3, size=n, p=[0.5, 0.3, 0.2]) + rng.integers(0, 2, size=n), 4)
    return tuple_population(Attributes(("x", "y"), SIZES, np.stack([x, y], axis=1)))


def moments(protocol, pop, epsilon: float, repeats: int, simulation: str, seed: int = 1):
    """``{attribute: (mean, variance)}`` of the solution's estimates over ``repeats`` runs."""
    rng = np.random.default_rng(seed)
    runs = [protocol.run(pop, epsilon, rng, simulation=simulation) for _ in range(repeats)]
    out = {}
    for name in pop.attributes.names:
        f = np.stack([np.asarray(r[name].frequencies) for r in runs])
        out[name] = (f.mean(axis=0), f.var(axis=0, ddof=1))
    return out


def check_moments(pop, found, theory, repeats: int, var_tol: float) -> None:
    """Every item's mean within 5 sigma of its true frequency (sigma = sqrt(Var / repeats)), and
    each attribute's summed empirical variance within ``var_tol`` of the summed theory."""
    for j, name in enumerate(pop.attributes.names):
        f = pop.attributes.marginal_counts(j) / pop.n
        mean, var = found[name]
        expected = theory(j, f)
        assert np.all(np.abs(mean - f) <= 5 * np.sqrt(expected / repeats)), (name, mean, f)
        ratio = var.sum() / expected.sum()
        assert abs(ratio - 1) < var_tol, (name, ratio)
