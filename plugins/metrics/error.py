"""Error metrics on the full domain: MSE ([W20] §V, [JG19] Eq. 5, [MHS18]) and L1 ([A17] §4)."""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, Population

from ._align import aligned_truth


class MSE(Metric):
    """Squared error of the item frequencies, averaged (or summed) over the items.

    ``reduction: mean`` is (1/d) sum_v (f'_v - f_v)^2 ([W20], [JG19]); ``sum`` is the squared L2
    norm ||f' - f||^2 used by [MHS18]. ``scale: count`` multiplies the errors by n (n^2 for squares),
    the convention of [JG19] and of the authors' code.
    """

    name = "mse"
    params = (
        Param("reduction", str, "mean", "mean over the items, or sum (squared L2 norm)", choices=("mean", "sum")),
        Param("scale", str, "fraction", "fraction (frequencies) or count (users)", choices=("fraction", "count")),
    )

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        err = estimate.item_answers() - aligned_truth(truth, estimate)
        if self.scale == "count":
            err = err * estimate.n
        sq = err**2
        return float(sq.sum() if self.reduction == "sum" else sq.mean())


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(MSE)
