"""The paired tie test with the best (ldpbench/stats/paired.py) finds no difference where there is none, at its level."""

from __future__ import annotations

from support import paired_noisy

from ldpbench.stats.paired import compare_with_best


def test_no_difference_is_found_in_at_least_95_of_100_seeds():
    tied = sum(
        compare_with_best(paired_noisy(seed, 200, 0.0), greater_is_better=False)[1].tied_best for seed in range(100)
    )
    assert tied >= 95
