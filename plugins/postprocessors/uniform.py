"""Uniform: the trivial baseline 1/d for every item, whatever was reported.

DPBench (Hay et al., SIGMOD 2016, §4) asks every benchmark to report the trivial data-independent
baseline: a method that does not beat "every item has frequency 1/d" has learnt nothing from the
users. The output ignores the oracle's estimate entirely (and so is not unbiased: its error is the
population's own spread around 1/d).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, PostProcessor


class Uniform(PostProcessor):
    """Uniform: ``f'_v = 1/d`` for every item (DPBench's trivial baseline). Cost O(d)."""

    name = "uniform"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        d = estimate.d
        # No noise is left in a constant: the variance is 0, the support counts no longer apply.
        return estimate.replace(
            frequencies=np.full(d, 1.0 / d) if d else np.zeros(0),
            variance=np.zeros(d),
            support_counts=None,
            report_histogram=None,
            channel=None,
            parts=(),
            query_transforms=(),
        )


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Uniform)
