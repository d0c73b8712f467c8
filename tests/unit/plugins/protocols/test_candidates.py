"""OLH over a candidate set: the two paths' pieces (their laws agree: tests/statistical/test_pem.py)."""

from __future__ import annotations

import math

import numpy as np

from ldpbench_plugins.protocols import _candidates as olh


def test_olh_constants():
    assert olh.olh_buckets(1.0) == 4 and olh.olh_buckets(math.log(10)) == 11
    p, q = olh.olh_probabilities(1.0)
    assert math.isclose(p, math.e / (math.e + 3)) and q == 0.25
    assert olh.report_bits(1.0) == 64 + 2


def test_holders_of_counts_prefixes_by_binary_search():
    values = np.array([0b0001, 0b0011, 0b1000, 0b1011], dtype=np.uint64)
    counts = np.array([1, 2, 3, 4])
    assert olh.holders_of(values, counts, 4, 2, np.arange(4, dtype=np.uint64)).tolist() == [3, 0, 7, 0]
    assert olh.holders_of(values, counts, 4, 4, np.array([11, 5], dtype=np.uint64)).tolist() == [4, 0]


def test_a_user_supports_their_own_item_unless_perturbed():
    rng = np.random.default_rng(3)
    items = np.full(20_000, 2**63 + 7, dtype=np.uint64)
    seeds, reports = olh.perturb(items, 2.0, rng)
    support = olh.support_counts(seeds, reports, np.array([2**63 + 7, 5], dtype=np.uint64), 2.0)
    p, q = olh.olh_probabilities(2.0)
    sd = math.sqrt(items.size * 0.25)
    assert abs(support[0] - items.size * p) < 5 * sd and abs(support[1] - items.size * q) < 5 * sd
    est = olh.estimate_counts(support, items.size, 2.0)
    assert abs(est[0] - items.size) < 0.05 * items.size


def test_split_users_and_the_threshold():
    assert olh.split_users(10, 3).tolist() == [4, 3, 3]
    t = olh.significance_threshold(10_000, 1.0, 100)
    p, q = olh.olh_probabilities(1.0)
    assert t > 3 * math.sqrt(10_000 * q * (1 - q)) / (p - q)
