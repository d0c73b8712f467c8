"""A cell's latest append supersedes its earlier rows (ldpbench/results/appends.py)."""

from __future__ import annotations

import polars as pl

from ldpbench.engine.rows import APPEND_KEY
from ldpbench.results.appends import latest_appends


def frame(rows):
    """Stored rows as (cell_id, pipeline, value, append id); one oracle and metric."""
    return pl.DataFrame(
        [dict(cell_id=c, oracle="grr", pipeline=p, metric="mse", value=v, **{APPEND_KEY: a}) for c, p, v, a in rows],
        schema={
            "cell_id": pl.String,
            "oracle": pl.String,
            "pipeline": pl.String,
            "metric": pl.String,
            "value": pl.Float64,
            APPEND_KEY: pl.String,
        },
    )


def test_the_latest_append_of_a_cell_wins_and_cells_keep_their_first_place():
    df = frame(
        [
            ("a", "base", 1.0, "1"),
            ("a", "norm", 2.0, "1"),
            ("b", "base", 3.0, "2"),
            ("a", "base", 4.0, "3"),  # a rerun of cell a: only its base row this time
        ]
    )
    out = latest_appends(df)
    assert APPEND_KEY not in out.columns
    assert out.select("cell_id", "pipeline", "value").rows() == [("a", "base", 4.0), ("b", "base", 3.0)]


def test_rows_without_append_ids_supersede_by_contiguous_run():
    df = frame([("a", "base", 1.0, None), ("b", "base", 2.0, None), ("a", "base", 5.0, None), ("a", "norm", 6.0, None)])
    assert latest_appends(df).select("cell_id", "pipeline", "value").rows() == [
        ("a", "base", 5.0),
        ("a", "norm", 6.0),
        ("b", "base", 2.0),
    ]


def test_within_the_surviving_append_a_repeated_row_keeps_its_last_value():
    df = frame([("a", "base", 1.0, "1"), ("a", "base", 7.0, "1")])
    assert latest_appends(df)["value"].to_list() == [7.0]


def test_nothing_stored_is_nothing_read():
    out = latest_appends(frame([]))
    assert out.is_empty() and APPEND_KEY not in out.columns
