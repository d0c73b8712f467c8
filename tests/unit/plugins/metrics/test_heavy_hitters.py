"""Threshold heavy-hitter metrics ([JG19] §II-C; docs/algorithms.md §8.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.errors import NotApplicable, ParamError
from ldpbench.types import Estimate, Population
from ldpbench_plugins.metrics.heavy_hitters import precision_recall_f
from ldpbench_plugins.numerics.noise import significance_threshold

RNG = np.random.default_rng(0)


def scores(plugins, truth_counts, est_counts, **params):
    n = int(np.sum(truth_counts))
    truth = Population(np.asarray(truth_counts))
    est = Estimate(
        np.asarray(est_counts, dtype=float) / n, n, 1.0, "hand", 0.5, 0.25, np.full(len(est_counts), 0.01 / n)
    )
    return tuple(plugins.create("metric", m, params).score(truth, est, RNG) for m in ("precision", "recall", "f-score"))


def test_a15_toy_examples(plugins):
    true, est = [10, 5, 1, 0], [9, 6, 2, -1]
    assert scores(plugins, true, est, threshold=4, scale="count") == (1.0, 1.0, 1.0)
    p, r, f = scores(plugins, true, est, threshold=1.5, scale="count")
    assert (p, r) == (pytest.approx(2 / 3), 1.0) and f == pytest.approx(0.8)
    # the same thresholds as fractions of n = 16
    assert scores(plugins, true, est, threshold=4 / 16) == (1.0, 1.0, 1.0)


def test_empty_set_conventions(plugins):
    # nothing predicted, nothing actual: precision = recall = 1
    assert scores(plugins, [10, 5], [9, 6], threshold=100, scale="count") == (1.0, 1.0, 1.0)
    # nothing predicted but something actual: precision 1, recall 0
    assert scores(plugins, [10, 5], [1, 1], threshold=4, scale="count") == (1.0, 0.0, 0.0)
    # predicted, none actual: precision 0, recall 1
    assert scores(plugins, [1, 1], [10, 5], threshold=4, scale="count") == (0.0, 1.0, 0.0)
    assert precision_recall_f(0, 0, 0) == (1.0, 1.0, 1.0)
    assert precision_recall_f(0, 3, 2) == (0.0, 0.0, 0.0)


def test_the_comparison_is_strict(plugins):
    assert scores(plugins, [4, 5], [4, 5], threshold=4, scale="count") == (1.0, 1.0, 1.0)
    p, r, _ = scores(plugins, [4, 5], [5, 5], threshold=4, scale="count")
    assert (p, r) == (0.5, 1.0)


def test_significance_threshold_comes_from_the_oracle_noise(plugins):
    n, d, eps = 100_000, 50, 2.0
    p, q = 0.5, 1 / (math.exp(eps) + 1)
    var = q * (1 - q) / (n * (p - q) ** 2)
    tau = significance_threshold(math.sqrt(var), d)
    truth = np.full(d, n // d)
    truth[0] += n - truth.sum()
    f = np.zeros(d)
    f[:3] = [tau * 1.01, tau * 0.99, tau * 2]
    est = Estimate(f, n, eps, "oue", p, q, np.full(d, var))
    metric = plugins.create("metric", "precision", {})
    assert metric.fraction_threshold(est) == pytest.approx(tau)
    # truth: all items at 1/d = 0.02 > tau? make the truth sparse so the answer is known
    truth = np.zeros(d, dtype=np.int64)
    truth[0], truth[2], truth[5] = int(0.5 * n), int(0.3 * n), n - int(0.5 * n) - int(0.3 * n)
    pop = Population(truth)
    assert metric.score(pop, est, RNG) == pytest.approx(1.0)  # items 0 and 2 predicted, both true
    assert plugins.create("metric", "recall", {}).score(pop, est, RNG) == pytest.approx(2 / 3)


def test_significance_needs_a_noise_model(plugins):
    est = Estimate(np.array([0.5, 0.5]), 10, 1.0, "mystery")
    with pytest.raises(NotApplicable, match="noise"):
        plugins.create("metric", "f-score", {}).score(Population(np.array([5, 5])), est, RNG)


def test_bad_threshold_is_rejected(plugins):
    with pytest.raises(ParamError):
        plugins.create("metric", "recall", {"threshold": "signif"})
    assert plugins.create("metric", "recall", {}).greater_is_better
