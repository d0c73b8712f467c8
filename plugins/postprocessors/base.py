"""Base: the identity post-processor — the unbiased estimate as the oracle produced it ([W20] §IV)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags
from ldpbench.types.domain import RESULTS


class Base(PostProcessor):
    """Base: use the existing estimate, unprocessed and unbiased ([W20] Table I). Cost O(1)."""

    name = "base"

    def tags(self) -> PostProcessorTags:
        # The pipeline of a spec that lists none: the oracle's estimate as it is. The identity
        # takes every result kind, a heavy-hitter protocol's identified items too.
        return dataclasses.replace(super().tags(), default=True, results=RESULTS)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Base)
