"""The few polars calls whose spelling changed inside the versions ``pyproject.toml`` allows
(polars >= 1.0): one place that knows both spellings, so the declared floor stays true and the
newest polars works too (tests/system/test_dependency_floors.py installs the floor and runs a report).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import cache

import polars as pl


@cache
def _null_keys_keyword() -> str:
    # polars 1.24 renamed join(join_nulls=) to join(nulls_equal=); polars 2 knows only the new name.
    return "nulls_equal" if "nulls_equal" in inspect.signature(pl.DataFrame.join).parameters else "join_nulls"


def join_matching_nulls(left: pl.DataFrame, right: pl.DataFrame, on: Sequence[str], how: str = "inner") -> pl.DataFrame:
    """``left.join(right, on=on, how=how)`` where a null key equals a null key (a leaderboard row
    without a user sample has ``users`` null, and must still meet its partner row)."""
    return left.join(right, on=list(on), how=how, **{_null_keys_keyword(): True})
