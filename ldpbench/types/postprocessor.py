"""The post-processor contract: :class:`PostProcessor`."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from ldpbench.types.data import Estimate
from ldpbench.types.plugin import Plugin, implements
from ldpbench.types.tags import PostProcessorTags


class PostProcessor(Plugin):
    """``Estimate -> Estimate`` (Base-Pos, Norm-Sub, Calibrate, EM, ...); chainable.

    A post-processor that acts on **query answers** rather than on the vector (Post-Pos of
    [W20]) sets ``acts_on = "queries"`` and implements :meth:`answer`; the default :meth:`apply`
    then attaches it to the estimate, and metrics call :meth:`Estimate.answer`.

    Capabilities are announced by :meth:`tags` (a :class:`~ldpbench.types.PostProcessorTags`):
    ``acts_on`` from the class attribute, and, by overriding :meth:`tags`, ``requires_channel``
    (EM-family methods, which need a finite-output oracle's report histogram and channel) and
    ``default`` (the pipeline of a spec that lists none).
    """

    #: ``"estimate"`` (the vector) or ``"queries"`` (query answers, through :meth:`answer`).
    acts_on: ClassVar[Literal["estimate", "queries"]] = "estimate"

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """The post-processor's registration rules: ``acts_on`` is ``"estimate"`` or
        ``"queries"``, and a query-time step implements :meth:`answer`."""
        problems = super().contract_problems(cls)
        if cls.acts_on not in ("estimate", "queries"):
            problems.append(f"acts_on must be 'estimate' or 'queries', got {cls.acts_on!r}")
        elif cls.acts_on == "queries" and not implements(cls, PostProcessor, "answer"):
            problems.append("acts_on = 'queries' needs answer(sums, estimate)")
        return problems

    def tags(self) -> PostProcessorTags:
        """What this post-processor needs and how it acts (override to add ``requires_channel``)."""
        return PostProcessorTags(acts_on=type(self).acts_on)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        """The processed estimate (a new object: the input is never modified).

        A post-processor that cannot use its input (EM without a report histogram) raises an
        :class:`ldpbench.errors.LdpbenchError` saying why. Report a usable but degraded result with
        :meth:`Estimate.with_warning`.
        """
        if self.tags().acts_on == "queries":
            return estimate.replace(query_transforms=estimate.query_transforms + (self,))
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def answer(self, sums: np.ndarray, estimate: Estimate) -> np.ndarray:
        """Transform raw query answers (only for ``acts_on == "queries"``)."""
        raise NotImplementedError(f"{type(self).__name__}.answer")
