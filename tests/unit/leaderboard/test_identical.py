"""Identical series are found from their numbers, never from their names."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ldpbench.leaderboard.identical import RELATIVE_TOLERANCE, aggregate_values, identical_series

A = ("zipf", "", 1.0, "grr", "a", "mse")
B = ("zipf", "", 1.0, "grr", "b", "mse")
C = ("zipf", "", 1.0, "grr", "c", "mse")
A4, B4, C4 = ((*k[:2], 4.0, *k[3:]) for k in (A, B, C))


def test_series_with_the_same_repeats_at_every_point_are_grouped_in_input_order():
    values = {
        A: np.array([1.0, 2.0]),
        B: np.array([1.0, 2.0]),
        C: np.array([1.0, 2.5]),
        A4: np.array([0.1, 0.2]),
        B4: np.array([0.1, 0.2]),
        C4: np.array([0.1, 0.2]),
    }
    series = {"a": [(1.0, A), (4.0, A4)], "b": [(1.0, B), (4.0, B4)], "c": [(1.0, C), (4.0, C4)]}
    assert identical_series(series, values) == [["a", "b"], ["c"]]


def test_equal_means_with_other_repeats_are_not_the_same_series():
    # Same mean (1.5) and nearly the same spread: only the repeats tell them apart.
    values = {A: np.array([1.0, 2.0]), B: np.array([2.0, 1.0])}
    assert identical_series({"a": [(1.0, A)], "b": [(1.0, B)]}, values) == [["a"], ["b"]]


def test_last_bit_differences_count_as_equal_and_larger_ones_do_not():
    base = np.array([1e-4, 3e-5, 7e-6])
    close = base * (1 + 1e-14)  # a different order of float operations
    far = base * (1 + 100 * RELATIVE_TOLERANCE)
    assert identical_series({"a": [(1.0, A)], "b": [(1.0, B)]}, {A: base, B: close}) == [["a", "b"]]
    assert identical_series({"a": [(1.0, A)], "b": [(1.0, B)]}, {A: base, B: far}) == [["a"], ["b"]]


def test_failures_in_the_same_repeats_match_and_in_other_repeats_do_not():
    values = {A: np.array([1.0, math.nan]), B: np.array([1.0, math.nan]), C: np.array([math.nan, 1.0])}
    series = {"a": [(1.0, A)], "b": [(1.0, B)], "c": [(1.0, C)]}
    assert identical_series(series, values) == [["a", "b"], ["c"]]


def test_other_points_or_unknown_rows_never_merge():
    values = {A: np.array([1.0]), B4: np.array([1.0])}
    # the same numbers at another epsilon are another series
    assert identical_series({"a": [(1.0, A)], "b": [(4.0, B4)]}, values) == [["a"], ["b"]]
    # a row without values stays alone, and so does an empty series
    assert identical_series({"a": [(1.0, A)], "c": [(1.0, C)], "e": []}, values) == [["a"], ["c"], ["e"]]


def test_the_aggregate_stand_in_uses_every_moment():
    lb = pl.DataFrame(
        {
            "dataset": ["zipf"] * 2,
            "users": [""] * 2,
            "epsilon": [1.0] * 2,
            "oracle": ["grr"] * 2,
            "pipeline": ["a", "b"],
            "metric": ["mse"] * 2,
            "mean": [1.0, 1.0],
            "stderr": [0.1, 0.2],
            "ci_low": [0.8, 0.6],
            "ci_high": [1.2, 1.4],
            "failed": [0, 0],
        }
    )
    values = aggregate_values(lb)
    assert identical_series({"a": [(1.0, A)], "b": [(1.0, B)]}, values) == [["a"], ["b"]]
