"""Is a row significantly worse than the best of its group? Paired comparisons over repeats.

Every pipeline of a cell post-processes the same oracle output, and every oracle of a repeat
sees the same users, so two rows of a leaderboard group are *paired* by repeat: the noise they
share cancels in the per-repeat difference. :func:`compare_with_best` marks each row:

- **Tied with the best** (``tied_best``): the row is in the model confidence set of the group
  (:mod:`.mcs`; Hansen, Lunde & Nason 2011): the chance that *any* row whose expected value equals
  the best one is called worse is at most ``alpha``, the best being chosen from the same repeats.
  ``p_value`` is the row's MCS p-value (1 for the best).
- **No verdict** (``tied_best`` is None): with fewer repeats than :func:`.mcs.min_repeats` no row
  can be called worse at ``alpha``; the row is not marked tied, and the leaderboard says how many
  repeats a verdict needs.
- **Interval**: a paired percentile bootstrap of the mean difference (row minus best, in the
  metric's own units; :data:`BOOTSTRAP_RESAMPLES` resamples of the repeats, a fixed seed so the
  leaderboard is reproducible).

A row whose every paired difference is zero (to rounding) is tied by definition: two pipelines
with identical outputs are always tied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ldpbench.stats.mcs import RELATIVE_ZERO, confidence_set_p_values, smallest_p

#: Level of ``tied_best`` (the model confidence set) unless the spec sets ``alpha``.
DEFAULT_ALPHA = 0.05
#: Resamples of the paired bootstrap interval.
BOOTSTRAP_RESAMPLES = 2000
#: Level of the bootstrap interval.
INTERVAL_LEVEL = 0.95


@dataclass(frozen=True)
class PairedResult:
    """One row's comparison with its group's best (the best itself: p = 1, difference 0)."""

    rank: int | None  # 1 = best mean; equal means share the smallest rank; None without a mean
    tied_best: bool | None  # None: too few repeats for a verdict at alpha
    p_value: float  # the model confidence set's p-value; NaN without a mean
    diff_low: float  # bootstrap interval of mean(row - best), metric units
    diff_high: float


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries stay NaN and do not count).

    The i-th smallest of m p-values is multiplied by ``m - i + 1`` (i from 1), made monotone
    with a running maximum and capped at 1 (Holm 1979; Wright, Biometrics 1992, for the
    adjusted form).
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def _bootstrap(diff: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    if diff.size < 2:
        return (float("nan"), float("nan"))
    idx = rng.integers(0, diff.size, size=(BOOTSTRAP_RESAMPLES, diff.size))
    means = diff[idx].mean(axis=1)
    tail = (1 - INTERVAL_LEVEL) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _ranks(score: np.ndarray) -> list[int | None]:
    """Competition ranks ("1224") of a score to maximize; NaN gets None."""
    out: list[int | None] = []
    for s in score:
        out.append(None if np.isnan(s) else int(np.sum(score[~np.isnan(score)] > s)) + 1)
    return out


def compare_with_best(
    values: np.ndarray, greater_is_better: bool, alpha: float = DEFAULT_ALPHA, seed: int = 0
) -> list[PairedResult]:
    """Compare every row of a group with the group's best mean on paired per-repeat values.

    :param values: shape ``(rows, repeats)``, the metric per row and repeat, NaN where that
        repeat failed or is missing (pairs use the repeats both rows have).
    :param greater_is_better: the metric's direction.
    :param alpha: the level of the model confidence set.
    :param seed: seed of the bootstrap interval (fixed: the same results give the same table);
        the confidence set's sign flips are seeded from the values themselves.
    :returns: one :class:`PairedResult` per row, in order.
    """
    values = np.asarray(values, dtype=float)
    rows = values.shape[0]
    with np.errstate(invalid="ignore"):
        counts = np.sum(~np.isnan(values), axis=1)
        means = np.where(counts > 0, np.nansum(values, axis=1) / np.maximum(counts, 1), np.nan)
    score = means if greater_is_better else -means
    ranks = _ranks(score)
    if np.all(np.isnan(score)):
        return [PairedResult(None, False, float("nan"), float("nan"), float("nan")) for _ in range(rows)]
    best = int(np.nanargmax(score))
    p_values = confidence_set_p_values(-values if greater_is_better else values)
    # Repeats in which at least two rows have a value: the most any pair can use.
    shared = int(np.sum(np.sum(~np.isnan(values), axis=0) >= 2))
    decidable = smallest_p(shared) <= alpha
    rng = np.random.default_rng(seed)
    out = []
    for i in range(rows):  # a group holds a handful of rows; the work inside is vectorized
        if i == best:
            out.append(PairedResult(ranks[i], True, 1.0, 0.0, 0.0))
            continue
        if np.isnan(score[i]):
            out.append(PairedResult(None, False, float("nan"), float("nan"), float("nan")))
            continue
        both = ~np.isnan(values[i]) & ~np.isnan(values[best])
        diff = values[i, both] - values[best, both]
        magnitude = max(
            float(np.max(np.abs(values[i, both]), initial=0.0)), float(np.max(np.abs(values[best, both]), initial=0.0))
        )
        diff = np.where(np.abs(diff) <= RELATIVE_ZERO * magnitude, 0.0, diff)
        identical = diff.size > 0 and not np.any(diff)
        interval = _bootstrap(diff, rng)
        if identical or score[i] == score[best]:
            tied: bool | None = True
        elif not decidable:
            tied = None
        else:
            tied = bool(p_values[i] > alpha)
        out.append(PairedResult(ranks[i], tied, float(p_values[i]), *interval))
    return out
