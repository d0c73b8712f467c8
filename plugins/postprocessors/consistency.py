"""The consistency post-processors of Wang et al. ([W20], NDSS 2020, §IV and Table I).

A frequency estimate is *consistent* when every entry is non-negative and the entries sum to 1.
Each method below enforces one or both constraints in its own way (the one-line descriptions are
[W20] Table I's); Base (the identity) lives in :mod:`.base`, Power and PowerNS in :mod:`.power`.

| method   | non-neg           | sum = 1 | cost                      |
|----------|-------------------|---------|---------------------------|
| base-pos | yes               | no      | O(d)                      |
| post-pos | yes (query answers)| no     | O(1) per query answer     |
| base-cut | yes               | no      | O(d)                      |
| norm     | no                | yes     | O(d)                      |
| norm-mul | yes               | yes     | O(d)                      |
| norm-cut | yes               | almost  | O(d log d) (a sort)       |
| norm-sub | yes               | yes     | O(d log d) (a sort)       |
| mle-apx  | yes               | yes     | O(d) per pass, few passes |

All work in the fraction scale (:attr:`Estimate.frequencies`); the constraints are
``f'_v >= 0`` and ``sum_v f'_v = 1``. Every method is a pure function of the estimate (no
randomness), so each is chainable in any order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags
from ldpbench_plugins.numerics.noise import significance_quantile
from ldpbench_plugins.numerics.simplex import simplex_shift, simplex_shift_iterative

from ._mle_apx import mle_apx_generic, mle_apx_grr

#: Round-off allowance for "sums to at most 1" (docs/algorithms.md §8.1 allows 1e-12).
_SLACK = 1e-12


def _vector(estimate: Estimate) -> np.ndarray:
    return np.asarray(estimate.frequencies, dtype=float)


def _result(estimate: Estimate, name: str, f: np.ndarray, **info: Any) -> Estimate:
    """The estimate with new frequencies; ``info`` (JSON-able diagnostics) goes under ``name``."""
    if info:
        return estimate.replace(frequencies=f, info={**estimate.info, name: info})
    return estimate.replace(frequencies=f)


def _descending_values(f: np.ndarray) -> np.ndarray:
    """The positive entries of ``f``, largest first (a value sort: faster than an argsort)."""
    return -np.sort(-f[f > 0])


def _top(f: np.ndarray, m: int) -> np.ndarray:
    """Mask of the first ``m`` items in descending order of ``f``, ties going to the smaller index."""
    mask = np.zeros(f.size, dtype=bool)
    if m <= 0:
        return mask
    cut = np.partition(f, f.size - m)[f.size - m]  # the m-th largest value
    mask[f > cut] = True
    ties = np.flatnonzero(f == cut)[: m - int(mask.sum())]
    mask[ties] = True
    return mask


class BasePos(PostProcessor):
    """Base-Pos: convert negative estimates to 0 ([W20] Table I). Cost O(d).

    ``f'_v = max(f~_v, 0)``. Best for single values among the simple methods, but the positive
    bias it gives every rare value accumulates over sets ([W20] §I).
    """

    name = "base-pos"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        return _result(estimate, self.name, np.maximum(_vector(estimate), 0.0))


class PostPos(PostProcessor):
    """Post-Pos: convert a negative query result to 0 ([W20] Table I). Cost O(1) per answer.

    Leaves the vector alone and clips each *query answer*: the answer to a set S is
    ``max(sum_{v in S} f~_v, 0)``; on single values it equals Base-Pos. Metrics see it through
    :meth:`Estimate.answer` / :meth:`Estimate.item_answers`.
    """

    name = "post-pos"
    acts_on = "queries"

    def answer(self, sums: np.ndarray, estimate: Estimate) -> np.ndarray:
        return np.maximum(np.asarray(sums, dtype=float), 0.0)


class BaseCut(PostProcessor):
    """Base-Cut: convert estimates below the significance threshold theta to 0 ([W20] Table I). Cost O(d).

    ``f'_v = 0 if f~_v < theta_v else f~_v`` (estimates *below* the threshold go, as both [W20]
    and [JG19] §IV-B say: "smaller than the significance threshold") with ``theta_v = Phi^{-1}(1 - alpha/d) * sigma_v``,
    sigma_v the oracle's V-approx noise standard deviation (``Estimate.variance``): the
    Bonferroni-corrected one-sided test of [W17], as in [JG19] Eq. 22 (OUE-Zero is OUE + Base-Cut).
    """

    name = "base-cut"
    params = (
        Param("alpha", float, 0.05, "significance level of the Bonferroni-corrected test", min=1e-300, max=0.999999),
    )

    def threshold(self, estimate: Estimate) -> np.ndarray:
        """Per-item threshold theta_v (fraction scale)."""
        if estimate.variance is None:
            raise NotApplicable(f"base-cut needs the oracle's noise variance, and '{estimate.mechanism}' gave none")
        variance = np.broadcast_to(np.asarray(estimate.variance, dtype=float), (estimate.d,))
        if not np.all(np.isfinite(variance)):
            raise NotApplicable(f"base-cut needs finite noise variances, and '{estimate.mechanism}' gave NaN or inf")
        # A variance *estimated* from the data (Blender's) can come out below zero; its threshold is 0.
        sigma = np.sqrt(np.maximum(variance, 0.0))
        return significance_quantile(estimate.d, self.alpha) * sigma

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        f = _vector(estimate)
        result = _result(estimate, self.name, np.where(f < self.threshold(estimate), 0.0, f))
        negative = int(np.count_nonzero(np.asarray(estimate.variance, dtype=float) < 0))
        if negative:
            result = result.with_warning(
                f"base-cut: {negative} item(s) had a negative estimated variance; their threshold is 0"
            )
        return result


class Norm(PostProcessor):
    """Norm: add delta to every estimate so that they sum to 1 ([W20] Table I). Cost O(d).

    ``f'_v = f~_v + (1 - sum f~)/d``: the least-squares projection onto the hyperplane sum = 1;
    unbiased for every pure oracle; may leave negatives; a no-op on GRR (sum f~ = 1 exactly).
    """

    name = "norm"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        f = _vector(estimate)
        return _result(estimate, self.name, f + (1.0 - f.sum()) / f.size)


class NormMul(PostProcessor):
    """Norm-Mul: convert negative estimates to 0, then multiply the positive ones by gamma ([W20] Table I). Cost O(d).

    ``f' = max(f~, 0) / sum max(f~, 0)``. If no estimate is positive the output is uniform (1/d)
    and ``info["norm-mul"]["uniform"]`` is set.
    """

    name = "norm-mul"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        pos = np.maximum(_vector(estimate), 0.0)
        total = pos.sum()
        if total > 0:
            return _result(estimate, self.name, pos / total)
        return _result(estimate, self.name, np.full(pos.size, 1.0 / pos.size), uniform=True)


def norm_cut_paper(f: np.ndarray) -> np.ndarray:
    """Norm-Cut, paper reading: keep the largest positive estimates while their sum stays <= 1.

    The kept set is the longest prefix of the descending order (ties by index) whose sum is at
    most 1 (+1e-12 for round-off); the rest become 0 and the kept values are unchanged, so the sum
    is "almost" 1 (<= 1). Idempotent: the kept prefix of the output is its whole positive part.
    """
    running = np.cumsum(_descending_values(f))
    # The slack keeps round-off in the running sum from cutting a vector that sums to 1.
    kept = int(np.count_nonzero(running <= 1.0 + _SLACK))
    return np.where(_top(f, kept), f, 0.0)


def norm_cut_code(f: np.ndarray) -> tuple[np.ndarray, bool]:
    """Norm-Cut, the authors' code reading: cut after the element that takes the sum past 1, rescale.

    Walking the estimates in descending order, the first one at which the running total exceeds 1
    is kept and everything after it becomes 0; the kept values are then scaled to sum to 1. If the
    positives never exceed 1 together, negatives are dropped first (the authors' loop would rescale
    with them), which makes this Norm-Mul. Returns ``(f', uniform_fallback)``.
    """
    running = np.cumsum(_descending_values(f))
    if running.size == 0:
        return np.full(f.size, 1.0 / f.size), True
    over = np.flatnonzero(running > 1.0)
    kept = int(over[0]) + 1 if over.size else running.size
    return np.where(_top(f, kept), f / running[kept - 1], 0.0), False


class NormCut(PostProcessor):
    """Norm-Cut: convert negative and small positive estimates below theta to 0 ([W20] Table I). Cost O(d log d).

    ``variant: paper`` (default): theta is the smallest cut such that the estimates at or above
    it sum to at most 1; they are kept unchanged (sum "almost" 1, never above).
    ``variant: code`` ([W20]'s code): keep the estimates down to the one that takes the running
    sum past 1, then rescale them to sum to exactly 1.
    """

    name = "norm-cut"
    params = (
        Param(
            "variant",
            str,
            "paper",
            "paper: keep the top estimates summing to <= 1; code: keep through the one passing 1, rescale to 1",
            choices=("paper", "code"),
        ),
    )

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        f = _vector(estimate)
        if self.variant == "paper":
            return _result(estimate, self.name, norm_cut_paper(f))
        out, uniform = norm_cut_code(f)
        return _result(estimate, self.name, out, **({"uniform": True} if uniform else {}))


class NormSub(PostProcessor):
    """Norm-Sub: convert negative estimates to 0 while adding delta to the positive ones ([W20] Table I). Cost O(d log d).

    ``f'_v = max(f~_v - lambda, 0)`` with lambda such that sum f' = 1: the Euclidean projection
    onto the probability simplex, i.e. the constrained least-squares solution, and the MLE under
    equal-variance Gaussian noise ([W20] §IV). ``algorithm: iterative`` runs the authors'
    active-set loop instead of the sort (same output to round-off).
    """

    name = "norm-sub"
    params = (
        Param(
            "algorithm",
            str,
            "sort",
            "sort (O(d log d) closed form) or iterative (active-set loop)",
            choices=("sort", "iterative"),
        ),
    )

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        f = _vector(estimate)
        shift = simplex_shift(f) if self.algorithm == "sort" else simplex_shift_iterative(f)
        return _result(estimate, self.name, np.maximum(f - shift, 0.0))


def support_fractions(estimate: Estimate) -> np.ndarray:
    """``y_v = c_v / n``, the observed support fractions behind the estimate.

    Taken from ``support_counts`` when they still describe the frequencies (an unprocessed
    estimate); after an earlier step changed the vector they are stale, and ``y`` is recomputed as
    ``q* + (p* - q*) f~`` — the same number for an unprocessed estimate, up to round-off.
    """
    p, q = estimate.p_star, estimate.q_star
    f = _vector(estimate)
    y = q + (p - q) * f
    c = estimate.support_counts
    if c is not None and np.shape(c) == f.shape and estimate.n > 0:
        from_counts = np.asarray(c, dtype=float) / estimate.n
        if np.allclose(from_counts, y, rtol=0.0, atol=1e-9):
            return from_counts
    return y


def _is_grr_like(estimate: Estimate) -> bool:
    # A report supports exactly one item: p* + (d - 1) q* = 1.
    p, q = estimate.p_star, estimate.q_star
    return abs(p + (estimate.d - 1) * q - 1.0) <= 1e-9


class MLEApx(PostProcessor):
    """MLE-Apx: convert negative estimates to 0, then add delta to the positive ones ([W20] Table I). Cost O(d) per pass.

    The approximate MLE of the frequencies on a shrinking support set (see :mod:`._mle_apx`).
    ``variant: generic`` (default, the paper's reading; any pure oracle): Gaussian likelihood with
    the value-dependent variance. ``variant: grr`` (the authors' code for GRR; needs an oracle
    whose report supports one item, p* + (d-1) q* = 1): the exact multinomial MLE on the support.
    """

    name = "mle-apx"
    params = (
        Param(
            "variant",
            str,
            "generic",
            "generic (Gaussian, any pure oracle) or grr (multinomial, GRR only)",
            choices=("generic", "grr"),
        ),
    )

    def tags(self) -> PostProcessorTags:
        # reads the oracle's p*, q*: not for a non-pure oracle (SHE's real-valued sums)
        return dataclasses.replace(super().tags(), requires_pure=True)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        p, q = estimate.p_star, estimate.q_star
        if p is None or q is None:
            raise NotApplicable(f"mle-apx needs a pure oracle's p* and q*, and '{estimate.mechanism}' gave none")
        if self.variant == "grr" and not _is_grr_like(estimate):
            raise NotApplicable(
                f"mle-apx variant 'grr' needs a GRR-like oracle (p* + (d-1) q* = 1), got '{estimate.mechanism}' "
                f"with p*={p:.6g}, q*={q:.6g}, d={estimate.d}; use variant 'generic'"
            )
        solve = mle_apx_grr if self.variant == "grr" else mle_apx_generic
        out, passes = solve(support_fractions(estimate), _vector(estimate), p, q)
        return _result(estimate, self.name, out, passes=passes)


#: The methods this module registers, in [W20] Table I order.
POSTPROCESSORS = (BasePos, PostPos, BaseCut, Norm, NormMul, NormCut, NormSub, MLEApx)


@hookimpl
def ldpbench_register_postprocessors(registry):
    for cls in POSTPROCESSORS:
        registry.register(cls)
