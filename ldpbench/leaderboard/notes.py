"""Which leaderboard rows carry plugin warnings, each named by its row.

A plugin leaves a warning in ``Estimate.info`` ("ibu hit its iteration cap ..."); the engine keeps
it in the result row's ``notes`` and :func:`ldpbench.leaderboard.aggregate.aggregate` in the
leaderboard's, with how many rows carry it. A warning means little without the row it belongs to,
so everything that shows warnings (the run's summary, the report) names the row from here.
"""

from __future__ import annotations

import polars as pl

from ldpbench.leaderboard.render import format_epsilon

#: A warning belongs to a pipeline's run in a cell, not to a metric: one line per these columns.
NOTE_ROW_COLUMNS = ("dataset", "users", "epsilon", "oracle", "pipeline")


def noted_rows(lb: pl.DataFrame) -> list[tuple[str, str]]:
    """``(row, notes)`` for every (dataset, users, epsilon, oracle, pipeline) with warnings, in the
    leaderboard's order; ``row`` reads ``"oracle · pipeline at dataset, users U, ε=…"``."""
    if "notes" not in lb.columns:  # a leaderboard written before the column existed
        return []
    rows = lb.filter(pl.col("notes").is_not_null()).unique(NOTE_ROW_COLUMNS, keep="first", maintain_order=True)
    return [(_row_name(r), r["notes"]) for r in rows.iter_rows(named=True)]


def _row_name(r: dict) -> str:
    where = [str(r["dataset"])] + ([f"users {r['users']}"] if r["users"] else []) + [format_epsilon(r["epsilon"])]
    return f"{r['oracle']} · {r['pipeline']} at {', '.join(where)}"
