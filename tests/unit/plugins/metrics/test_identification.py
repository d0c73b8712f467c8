"""Metrics of identified heavy hitters, on hand-made results."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Domain, IdentifiedItems, Population
from ldpbench_plugins.metrics.identification import (
    NCR,
    BitsPerUser,
    IdentifiedMSE,
    ServerTime,
    TopKF1,
    TopKPrecision,
    TopKRecall,
    true_frequencies,
    true_top_k,
)

VALUES = np.array([2, 5, 2**63, 2**64 - 1], dtype=np.uint64)
TRUTH = Population(np.array([10, 40, 30, 20]), domain=Domain.bit_strings(64), values=VALUES)
RNG = np.random.default_rng(0)


def found(items, freqs=None, k=3):
    items = np.array(items, dtype=np.uint64)
    f = np.full(items.size, 0.1) if freqs is None else np.array(freqs, dtype=float)
    return IdentifiedItems(items, f, n=100, epsilon=1.0, k=k, bits_per_user=66.0, server_seconds=0.5)


def test_true_top_k_and_frequencies():
    assert true_top_k(TRUTH, 3).tolist() == [5, 2**63, 2**64 - 1]
    assert true_frequencies(TRUTH, np.array([5, 7, 2**64 - 1], dtype=np.uint64)).tolist() == [0.4, 0.0, 0.2]


def test_precision_recall_f1():
    result = found([5, 2**63, 99])  # two of the true top-3, one item nobody holds
    assert TopKPrecision().score(TRUTH, result, RNG) == pytest.approx(2 / 3)
    assert TopKRecall().score(TRUTH, result, RNG) == pytest.approx(2 / 3)
    assert TopKF1().score(TRUTH, result, RNG) == pytest.approx(2 / 3)
    assert TopKPrecision().score(TRUTH, found([]), RNG) == 1.0 and TopKF1().score(TRUTH, found([]), RNG) == 0.0


def test_ncr_weights_the_heaviest_most():
    # true ranks: 5 -> 3 points, 2^63 -> 2, 2^64-1 -> 1; total 6
    assert NCR().score(TRUTH, found([5]), RNG) == pytest.approx(3 / 6)
    assert NCR().score(TRUTH, found([2**64 - 1, 99]), RNG) == pytest.approx(1 / 6)
    assert NCR().score(TRUTH, found([5, 2**63, 2**64 - 1]), RNG) == 1.0


def test_identified_mse_bits_and_time():
    result = found([5, 99], [0.5, 0.1])
    assert IdentifiedMSE().score(TRUTH, result, RNG) == pytest.approx(((0.5 - 0.4) ** 2 + 0.1**2) / 2)
    assert IdentifiedMSE().score(TRUTH, found([]), RNG) == 0.0
    assert BitsPerUser().score(TRUTH, result, RNG) == 66.0 and ServerTime().score(TRUTH, result, RNG) == 0.5
    assert math.isnan(ServerTime().score(TRUTH, result.replace(server_seconds=math.nan), RNG))


def test_they_declare_what_they_score():
    for metric in (TopKF1(), NCR(), IdentifiedMSE()):
        assert metric.tags().results == ("identified-items",)
    assert BitsPerUser().tags().results == ("identified-items", "identified-itemsets")
