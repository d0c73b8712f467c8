"""Shared checks and samplers of the built-in frequency oracles (private)."""

from __future__ import annotations

import math

import numpy as np

from ldpbench.errors import ParamError


def check_epsilon(epsilon: float, oracle: str) -> float:
    """The budget as a float in (0, inf]; ``inf`` means no perturbation (users report the truth)."""
    eps = float(epsilon)
    if math.isnan(eps) or eps <= 0:
        raise ParamError(f"oracle '{oracle}': epsilon must be > 0, got {epsilon!r}", "epsilon")
    return eps


def check_domain(d: int, oracle: str, minimum: int = 1) -> int:
    """The domain size as an int >= ``minimum``."""
    if int(d) != d or int(d) < minimum:
        raise ParamError(f"oracle '{oracle}' needs a domain of at least {minimum} items, got d={d!r}", "d")
    return int(d)


def exp_neg(epsilon: float) -> float:
    """``exp(-epsilon)``: every constant below is written with it so that large budgets (and
    ``inf``) neither overflow nor lose precision."""
    return math.exp(-epsilon)


def as_items(values: np.ndarray, d: int) -> np.ndarray:
    """Users' items as an int64 array, checked to lie in ``[0, d)``."""
    v = np.asarray(values)
    if v.ndim != 1:
        raise ValueError(f"values must be a one-dimensional array of items, got shape {v.shape}")
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise ValueError(f"values must be integers (item indices), got dtype {v.dtype}")
    v = v.astype(np.int64, copy=False)
    if v.size and (int(v.min()) < 0 or int(v.max()) >= d):
        raise ValueError(f"values must lie in [0, {d}), got range [{int(v.min())}, {int(v.max())}]")
    return v


def as_counts(true_counts: np.ndarray, d: int) -> np.ndarray:
    """True item counts as an int64 array of length ``d``."""
    c = np.asarray(true_counts)
    if c.shape != (d,):
        raise ValueError(f"true_counts must have shape ({d},), got {c.shape}")
    c = c.astype(np.int64, copy=False)
    if c.size and int(c.min()) < 0:
        raise ValueError("true_counts must be non-negative")
    return c


def independent_binomials(counts: np.ndarray, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
    """``c_v ~ Binomial(n_v, p) + Binomial(n - n_v, q)``, independent over ``v``.

    The exact law of the support counts of a pure protocol whose support indicators are
    independent across values given the inputs (OUE's bits; OLH with an idealized hash).
    ``counts`` may be ``(..., d)``: independent populations along the leading axes.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=-1, keepdims=True)
    return (rng.binomial(counts, p) + rng.binomial(n - counts, q)).astype(np.int64)


#: The ``aggregate`` parameter's values (SS, CMS, PGR: :func:`aggregate_param`).
AGGREGATE_MODES = ("exact", "marginal")


def aggregate_param(exact_cost: str):
    """The ``aggregate`` parameter of an oracle whose exact aggregate sampler costs more than O(d)
    NumPy calls: ``exact`` (default) draws the joint law of the support counts; ``marginal`` draws
    each count from its exact law, independently across items (:func:`independent_binomials`), in
    O(d), and is declared approximate (``exact_aggregate`` False, so the rows say so).

    The per-item laws are exact, so every per-item quantity (an estimate's mean and variance, the
    expected MSE over items) is as under the exact sampler; what it loses is the dependence across
    items (covariances, the sum of the counts), which set queries and normalizing post-processors
    read."""
    from ldpbench.params import Param

    return Param(
        "aggregate",
        str,
        "exact",
        f"aggregate path: exact (the joint law of the support counts; {exact_cost}) or marginal (each "
        "count's exact law, independent across items, O(d): declared approximate)",
        choices=AGGREGATE_MODES,
    )


def independent_bits_table(d: int, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact output table of ``d`` independent support bits (OUE, THE): all ``2^d`` bit vectors.

    Row ``sum_w bit_w 2^w``; ``P[y, v] = prod_w P(bit_w | v)`` with ``P(bit_w = 1 | v)`` equal to
    ``p`` for ``w = v`` and ``q`` otherwise; ``S[y, w] = bit_w``.
    """
    if d > 16:
        raise ValueError(f"the output table has 2^d rows; d={d} is too large to enumerate (max 16)")
    rows = np.arange(1 << d)
    S = ((rows[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
    P = np.ones((rows.size, d))
    for v in range(d):
        bit_prob = np.where(np.arange(d) == v, p, q)
        P[:, v] = np.prod(np.where(S, bit_prob, 1 - bit_prob), axis=1)
    return P, S
