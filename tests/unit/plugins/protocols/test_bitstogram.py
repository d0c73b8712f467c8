"""Bitstogram: cells, groups, accounting, a bucket's item rebuilt bit by bit (identification:
tests/statistical/test_bitstogram.py)."""

from __future__ import annotations

import math

import numpy as np

from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols.bitstogram import Bitstogram, bucket_of, cells


def test_a_cell_is_the_bucket_and_the_bit():
    v = np.array([0b1010 << 60], dtype=np.uint64)
    b = int(bucket_of(v, 64, 0)[0])
    assert [int(cells(v, 64, 0, j, 64)[0]) for j in range(4)] == [2 * b + 1, 2 * b, 2 * b + 1, 2 * b]
    assert int(bucket_of(v, 64, 1)[0]) != b or int(bucket_of(v, 64, 2)[0]) != b  # repetitions rehash


def test_groups_and_accounting():
    bt = Bitstogram(repetitions=2, estimate_share=0.25)
    sizes = bt.group_sizes(1_000, 32)
    assert sizes.size == 65 and sizes[-1] == 250 and sizes.sum() == 1_000 and np.ptp(sizes[:-1]) <= 1
    groups = bt.privacy_accounting(3.0)
    assert all(math.isclose(sum(g["per_round"]), 3.0) for g in groups)


def test_bitstogram_rebuilds_the_heavy_items_on_both_paths():
    values = np.array([5, 2**40 + 9, 2**63 + 1, 2**64 - 7], dtype=np.uint64)
    pop = Population(np.array([40_000, 30_000, 20_000, 100]), domain=Domain.bit_strings(64), values=values)
    for simulation in ("aggregate", "per-user"):
        (result,) = Bitstogram(k=3, buckets=16).run(pop, 6.0, np.random.default_rng(2), simulation=simulation).values()
        assert result.items.tolist() == [5, 2**40 + 9, 2**63 + 1] and len(result.rounds) == 2


def test_one_bucket_yields_one_item_per_repetition_whatever_the_population():
    # Theory: with T = 1 every item shares the bucket, whose rebuilt item is the bitwise majority:
    # two planted items cannot both be found (R = 1 gives one candidate).
    values = np.array([0, 2**64 - 1], dtype=np.uint64)
    pop = Population(np.array([50_000, 50_000]), domain=Domain.bit_strings(64), values=values)
    (result,) = Bitstogram(k=2, buckets=1).run(pop, 8.0, np.random.default_rng(0)).values()
    assert result.items.size <= 1
