"""Threshold heavy hitters: precision, recall and F-score ([JG19] §II-C, Eq. 6-8; docs/algorithms.md §6.4).

Given a threshold tau, the predicted heavy hitters are ``P = {v : f'_v > tau}`` and the actual ones
``A = {v : f_v > tau}`` (strictly greater, both in the same scale). With TP = |P ∩ A|:
precision = TP / |P|, recall = TP / |A|, F = 2 P R / (P + R).

Conventions for empty sets (documented, docs/algorithms.md §8.1): precision = 1 when P is empty (no false
positive was made), recall = 1 when A is empty (nothing was missed), F = 0 when P + R = 0.

``threshold`` is a number or ``significance``:

- a number is a frequency fraction (``scale: fraction``, the default) or a count of users
  (``scale: count``; compared with n times the fractions, n = the estimate's users);
- ``significance`` is the oracle's significance threshold at the cell's epsilon,
  ``Phi^-1(1 - beta/d) * sigma`` with sigma the oracle's noise standard deviation (V-approx) —
  [JG19]'s choice for Figures 8-9. It needs an estimate that carries the oracle's noise variance
  (post-processors keep it).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, Population
from ldpbench_plugins.numerics.noise import DEFAULT_BETA, estimate_threshold

from ._align import aligned_truth


def confusion(true: np.ndarray, est: np.ndarray, tau: float) -> tuple[int, int, int]:
    """``(TP, |P|, |A|)`` for the threshold ``tau`` (same scale as both vectors)."""
    predicted = np.asarray(est, dtype=float) > tau
    actual = np.asarray(true, dtype=float) > tau
    return int(np.count_nonzero(predicted & actual)), int(predicted.sum()), int(actual.sum())


def precision_recall_f(tp: int, n_pred: int, n_actual: int) -> tuple[float, float, float]:
    """Precision, recall and F-score with the empty-set conventions of the module docstring."""
    precision = tp / n_pred if n_pred else 1.0
    recall = tp / n_actual if n_actual else 1.0
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f


class _HeavyHitterMetric(Metric):
    greater_is_better = True
    params = (
        Param(
            "threshold",
            (float, str),
            "significance",
            "a number (a fraction in [0, 1], or a count), or 'significance' (the oracle's threshold at this epsilon)",
            choices=("significance",),
            min=0,
            max=10**10,
        ),
        Param(
            "scale",
            str,
            "fraction",
            "scale of a numeric threshold: fraction (of users) or count (users)",
            choices=("fraction", "count"),
        ),
        Param(
            "beta", float, DEFAULT_BETA, "significance level of the 'significance' threshold", min=1e-300, max=0.999999
        ),
    )
    _which = 0

    def fraction_threshold(self, estimate: Estimate) -> float:
        """The threshold in the fraction scale for this estimate."""
        if self.threshold == "significance":
            try:
                return estimate_threshold(estimate, self.beta)
            except ValueError as exc:
                raise NotApplicable(f"{self.name}: threshold 'significance' needs the oracle's noise: {exc}") from None
        tau = float(self.threshold)
        return tau / estimate.n if self.scale == "count" else tau

    def scores(self, truth: Population, estimate: Estimate) -> tuple[float, float, float]:
        tau = self.fraction_threshold(estimate)
        tp, n_pred, n_actual = confusion(aligned_truth(truth, estimate), estimate.item_answers(), tau)
        return precision_recall_f(tp, n_pred, n_actual)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        return self.scores(truth, estimate)[self._which]


class Precision(_HeavyHitterMetric):
    """Precision of the items estimated above a threshold ([JG19] Eq. 6)."""

    name = "precision"
    _which = 0


class Recall(_HeavyHitterMetric):
    """Recall of the items truly above a threshold ([JG19] Eq. 7)."""

    name = "recall"
    _which = 1


class FScore(_HeavyHitterMetric):
    """F-score of threshold heavy-hitter identification ([JG19] Eq. 8)."""

    name = "f-score"
    _which = 2


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(Precision)
    registry.register(Recall)
    registry.register(FScore)
