"""The metric contract (ldpbench/types/metric.py): an error unless it says it is a score, not a
default metric unless its tags say so, and no theory unless it gives one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Estimate, Metric, MetricTags, Population


class MaxError(Metric):
    name = "max-error-test"

    def score(self, truth, estimate, rng):
        return float(np.abs(estimate.frequencies - truth.frequencies).max())


class Hits(MaxError):
    name = "hits-test"
    greater_is_better = True

    def tags(self):
        return MetricTags(default=True)


def test_the_defaults_of_a_metric():
    metric = MaxError()
    truth = Population(np.array([6, 3, 1]))
    est = Estimate(np.array([0.5, 0.4, 0.1]), n=10, epsilon=1.0)
    assert metric.score(truth, est, np.random.default_rng(0)) == pytest.approx(0.1)
    assert MaxError.greater_is_better is False and metric.tags() == MetricTags() and not metric.tags().default
    assert math.isnan(metric.theory(truth, est, np.full(3, 0.01)))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert metric.prepare(truth, [est, est], rng) is None and rng.bit_generator.state == state  # does nothing


def test_a_score_says_so_and_a_default_metric_says_so_in_its_tags():
    assert Hits.greater_is_better is True and Hits().tags().default
