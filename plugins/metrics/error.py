"""Error metrics on the full domain: MSE ([W20] §V, [JG19] Eq. 5, [MHS18]) and L1 ([A17] §4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, MetricTags, Population

from ..datasets.synthetic import MAX_DOMAIN  # a top-k cut-off beyond any domain is a typo
from ._align import aligned_truth, covers_whole_domain, evaluation_positions, rescaled


class MSE(Metric):
    """Squared error of the item frequencies, averaged (or summed) over the items.

    ``reduction: mean`` is (1/d) sum_v (f'_v - f_v)^2 ([W20], [JG19]); ``sum`` is the squared L2
    norm ||f' - f||^2 used by [MHS18]. ``scale: count`` multiplies the errors by n (n^2 for squares),
    the convention of [JG19] and of the authors' code. ``scale: n`` is the error per user count:
    the fraction-scale MSE times n. An unbiased oracle's MSE falls as 1/n ([W17] Eq. 2:
    Var = q*(1-q*)/(n (p*-q*)^2) + O(f/n)), so n * MSE depends on the mechanism and epsilon only,
    and datasets of different size can be compared on it.
    """

    name = "mse"
    params = (
        Param("reduction", str, "mean", "mean over the items, or sum (squared L2 norm)", choices=("mean", "sum")),
        Param(
            "scale",
            str,
            "fraction",
            "fraction (frequencies), count (users), or n (fraction MSE times n, comparable across dataset sizes)",
            choices=("fraction", "count", "n"),
        ),
    )

    def tags(self) -> MetricTags:
        # The metric of a spec that lists none; a mean (or sum) over items of one item's squared
        # error, so its expectation depends only on each item's law.
        return MetricTags(default=True, marginal_expectation=True)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        err = estimate.item_answers() - aligned_truth(truth, estimate)
        if self.scale == "count":
            err = err * estimate.n
        sq = err**2
        if self.scale == "n":
            sq = sq * estimate.n
        return float(sq.sum() if self.reduction == "sum" else sq.mean())

    def theory(self, truth: Population, estimate: Estimate, variance: np.ndarray) -> float:
        """E[MSE]: the mean (or sum) of the per-item expected squared errors the engine passes
        (the variances, plus the squared bias of an oracle declared biased), in this metric's scale."""
        if estimate.query_transforms or not covers_whole_domain(truth, estimate, np.arange(estimate.d)):
            return float("nan")
        var = np.asarray(variance, dtype=float)
        if self.scale == "count":
            var = var * float(estimate.n) ** 2
        elif self.scale == "n":
            var = var * estimate.n
        return float(var.sum() if self.reduction == "sum" else var.mean())


class L1(Metric):
    """L1 distance ``sum_v |f'_v - f_v|`` ([A17] §4.1; docs/algorithms.md §6.6), fraction scale by default.

    On a partial estimate (Blender's head list, ``Estimate.items`` set), or with ``top``, only those
    items are compared, and by default ([A17] §4.1, docs/algorithms.md §5.6) both the truth and the
    estimate are **rescaled to sum to 1 over them** once the wildcard mass is removed
    (``rescale: both``); ``truth`` rescales only the truth, ``none`` neither. A full-domain
    comparison is never rescaled. ``top: k`` restricts the comparison to the k items with the
    largest true frequency among those the estimate covers: ``l1: {top: 50}`` puts a full-domain
    oracle and Blender with a 50-record head list on the same footing (``top: 1`` with
    ``rescale: both`` is refused: both sides rescale to 1, an L1 of 0 always). ``scale: n`` multiplies
    the fraction-scale L1 by sqrt(n): an unbiased estimate's error falls as 1/sqrt(n), so the
    scaled error can be compared across datasets of different size.
    """

    name = "l1"
    params = (
        Param("reduction", str, "sum", "sum over the items (the L1 norm) or mean", choices=("sum", "mean")),
        Param(
            "scale",
            str,
            "fraction",
            "fraction (frequencies), count (users), or n (times sqrt(n), comparable across dataset sizes)",
            choices=("fraction", "count", "n"),
        ),
        Param(
            "rescale",
            str,
            "both",
            "on a partial comparison: rescale both, only the truth, or none",
            choices=("both", "truth", "none"),
        ),
        Param(
            "top",
            int,
            None,
            "compare only the items with the largest true frequency (null: all)",
            min=1,
            max=MAX_DOMAIN,
            nullable=True,
        ),
    )

    def tags(self) -> MetricTags:
        # A sum over items of one item's |error|, unless a partial comparison rescales the estimate
        # by its own sum over the compared items (then every item's error depends on the others).
        return MetricTags(marginal_expectation=self.top is None or self.rescale != "both")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.top == 1 and self.rescale == "both":
            # Rescaled to sum 1 over one item, truth and estimate are both 1: a metric that is 0 in
            # every cell would rank every method as perfect.
            raise ParamError(
                "l1 with top: 1 and rescale: both is 0 whatever the estimate (both are rescaled to 1 "
                "over the one item): use top >= 2, or rescale: truth or none",
                "top",
            )

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        positions = evaluation_positions(truth, estimate, self.top)
        if positions.size == 0:
            return float("nan")  # nothing to compare (e.g. an empty head list)
        f = aligned_truth(truth, estimate)[positions]
        est = estimate.item_answers()[positions]
        if not covers_whole_domain(truth, estimate, positions):
            if self.rescale in ("both", "truth"):
                f = rescaled(f)
            if self.rescale == "both":
                # an estimate with no mass on the list missed all of it: L1 = 1, not a failed cell
                est = rescaled(est, no_mass="zeros")
        err = np.abs(est - f)
        if self.scale == "count":
            err = err * estimate.n
        elif self.scale == "n":
            err = err * np.sqrt(estimate.n)
        return float(err.sum() if self.reduction == "sum" else err.mean())


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(MSE)
    registry.register(L1)
