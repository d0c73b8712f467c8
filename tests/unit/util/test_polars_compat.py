"""ldpbench/util/polars_compat.py: a join where null keys meet, on whichever polars is installed."""

from __future__ import annotations

import polars as pl

from ldpbench.util.polars_compat import join_matching_nulls


def test_a_null_key_meets_a_null_key_and_nothing_else():
    left = pl.DataFrame({"dataset": ["a", "a", "b"], "users": [None, 10, None], "x": [1, 2, 3]})
    right = pl.DataFrame({"dataset": ["a", "a", "c"], "users": [None, 20, None], "y": [7, 8, 9]})
    joined = join_matching_nulls(left, right, ["dataset", "users"])
    # ("a", null) pairs with ("a", null); ("a", 10)/("a", 20) differ; ("b", null)/("c", null) differ.
    assert joined.select("dataset", "users", "x", "y").rows() == [("a", None, 1, 7)]


def test_a_plain_join_without_the_helper_drops_null_keys():
    """Why the helper exists: polars' default join never matches nulls, so the row would be lost."""
    left = pl.DataFrame({"k": [None, 1], "x": [1, 2]})
    right = pl.DataFrame({"k": [None, 1], "y": [3, 4]})
    assert left.join(right, on="k").rows() == [(1, 2, 4)]
    assert sorted(join_matching_nulls(left, right, ["k"]).rows(), key=str) == sorted([(None, 1, 3), (1, 2, 4)], key=str)
