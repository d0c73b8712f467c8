"""The metric contract: :class:`Metric`."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ldpbench.types.data import Estimate, Population
from ldpbench.types.plugin import Plugin
from ldpbench.types.tags import MetricTags


class Metric(Plugin):
    """``(truth, estimate, rng) -> float``: one number per cell and pipeline.

    A metric scores the result kinds its tags list (``results``: a frequency vector by default;
    a heavy-hitter metric lists ``identified-items`` and receives
    :class:`~ldpbench.types.IdentifiedItems`).
    """

    #: ``True`` for scores (precision, NDCG); ``False`` for errors (MSE).
    greater_is_better: ClassVar[bool] = False

    def tags(self) -> MetricTags:
        """Override to set ``default`` (in the metrics of a spec that lists none)."""
        return MetricTags()

    @abstractmethod
    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        """Compare the estimate with the true population.

        ``truth`` is the population the users were drawn from; compare on fractions
        (``truth.frequencies``), restricted to ``estimate.items`` when that is set.
        """

    def theory(self, truth: Population, estimate: Estimate, variance: np.ndarray) -> float:
        """Optional: the expected score of ``estimate`` whose per-item expected squared error
        ``E[(f'_v - f_v)^2]`` (fraction scale) is ``variance`` -- the oracle's variance, plus its
        squared bias if its tags declare it biased -- e.g. MSE = mean(variance). NaN (the default)
        when the metric has no such formula. The engine stores it as the row's ``theory``
        (:mod:`ldpbench.engine.theory`)."""
        return math.nan

    def prepare(self, truth: Population, estimates: Sequence[Estimate], rng: np.random.Generator) -> None:
        """Optional: the estimates of a cell's pipelines this metric is about to score, one
        :meth:`score` call each, so that it can do work they share in one go (set-query sums all
        of them in one sparse product). Default: nothing.

        Only a speed-up: every number still comes from :meth:`score`, which must return what it
        would without this call (``rng`` is a generator in the state each :meth:`score` call gets,
        not the one it gets). The engine calls it only when no time limit is in force (with one,
        each pipeline is scored as soon as it is applied, so the rows finished in time keep their
        numbers), ignores what it raises, and never calls it for fewer than two estimates.
        """
        return None
