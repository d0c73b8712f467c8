"""The poisoning metrics (plugins/metrics/poisoning.py): the targets' gain against the genuine
truth, total and per target, and the error over the other items."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate, Poisoning, Population

TRUTH = Population(np.array([10, 20, 30, 40]))  # f = 0.1, 0.2, 0.3, 0.4
PLAN = Poisoning(attack="mga", targets=np.array([1, 3]), fake_users=5, beta=5 / 105)


def estimate(f, items=None):
    return Estimate(frequencies=np.asarray(f, dtype=float), n=105, epsilon=1.0, mechanism="grr", items=items)


def test_gain_total_and_per_target(plugins):
    truth = TRUTH.replace(poisoning=PLAN)
    est = estimate([0.1, 0.25, 0.3, 0.5])
    rng = np.random.default_rng(0)
    assert plugins.create("metric", "frequency-gain").score(truth, est, rng) == pytest.approx(0.15)
    assert plugins.create("metric", "frequency-gain", {"target": 1}).score(truth, est, rng) == pytest.approx(0.1)
    # an estimate over some items: looked up by item
    part = estimate([0.5, 0.25], items=np.array([3, 1]))
    assert plugins.create("metric", "frequency-gain").score(truth, part, rng) == pytest.approx(0.15)
    with pytest.raises(NotApplicable, match="does not cover target"):
        plugins.create("metric", "frequency-gain").score(truth, estimate([0.5], items=np.array([3])), rng)
    assert plugins.create("metric", "genuine-mse").score(truth, estimate([0.2, 0.9, 0.2, 0.9]), rng) == pytest.approx(
        0.01
    )


def test_an_unattacked_truth_is_declined(plugins):
    for name in ("frequency-gain", "genuine-mse"):
        metric = plugins.create("metric", name)
        assert metric.tags().poisoning
        with pytest.raises(NotApplicable, match="poisoned cell only"):
            metric.score(TRUTH, estimate([0.1] * 4), np.random.default_rng(0))
