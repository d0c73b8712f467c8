"""The averaging attack across rounds: how much T reports of one unchanged value reveal
(docs/longitudinal.md).

An adversary sees a user's T reports and guesses the value as the one they support most often
(ties broken at random): against a protocol that re-randomizes afresh every round the guess
converges to the true value as T grows; against a memoized one it converges to the permanent
response, which is only ``eps_inf``-LDP (Erlingsson, Pihur & Korolova, CCS 2014, §3: the reason
memoization exists).

From the success rate ``s`` over ``users`` draws with the value uniform over ``[d]``, a lower bound
on the privacy loss of the T reports together: any ``eps``-LDP release lets a guesser succeed
with probability at most ``e^eps / (e^eps + d - 1)`` under a uniform prior (for each output y,
``P(y | g(y)) <= e^eps P(y | x')`` for every x', so ``sum_x P(y | x) >= P(y | g(y)) (1 + (d - 1)
e^-eps)``; summing over y), hence ``eps >= ln(s (d - 1) / (1 - s))``. With the one-sided
Clopper-Pearson lower bound on ``s`` at level ``alpha`` it is a lower confidence bound: an
empirical lower bound on the privacy loss over T rounds, never a proof of privacy.

The protocol is a function ``supports(values, T, rng) -> (users, d)``: how many of each user's T
reports support each item, for users whose value stays ``values[i]`` (the mechanism's own code;
the longitudinal protocols provide ``static_supports``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ldpbench.audit.empirical import clopper_pearson

#: ``supports(values, T, rng)``: per user, how many of T reports support each item.
Supports = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class AveragingPoint:
    """The attack after ``rounds`` reports: success rate, its lower bound, and the eps lower bound."""

    rounds: int
    success: float
    success_lower: float
    epsilon_lower: float


def guess(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each user's most supported item, ties broken uniformly at random (vectorized)."""
    counts = np.asarray(counts, dtype=float)
    jitter = rng.random(counts.shape)  # < 1: breaks ties only, never reorders distinct counts
    return np.argmax(counts + jitter, axis=1)


def epsilon_lower_bound(success: float, d: int) -> float:
    """``ln(s (d - 1) / (1 - s))``: the least eps a guesser succeeding with probability ``s``
    under a uniform prior over ``d`` values implies (module docstring); 0 at or below chance."""
    if success <= 1 / d:
        return 0.0
    if success >= 1:
        return math.inf
    return math.log(success * (d - 1) / (1 - success))


def averaging_attack(
    supports: Supports,
    d: int,
    rounds: Sequence[int],
    users: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> list[AveragingPoint]:
    """The attack's success and the privacy loss it proves, for each number of rounds in ``rounds``
    (fresh users, values uniform over ``[d]``, for each)."""
    out = []
    for T in rounds:  # noqa: N806 - the papers' name
        values = rng.integers(0, d, size=users)
        hits = int(np.count_nonzero(guess(supports(values, int(T), rng), rng) == values))
        lower, _ = clopper_pearson(hits, users, alpha)
        out.append(AveragingPoint(int(T), hits / users, lower, epsilon_lower_bound(lower, d)))
    return out
