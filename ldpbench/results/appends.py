"""De-duplication of stored rows: a cell's latest append supersedes every earlier row of it.

A rerun appends a cell's rows again rather than rewriting the file (appends are atomic, rewrites
are not); reading keeps only the latest append of each cell.
"""

from __future__ import annotations

import polars as pl

from ldpbench.engine.rows import APPEND_KEY, ROW_KEY


def latest_appends(df: pl.DataFrame) -> pl.DataFrame:
    """Keep each cell's latest append; order rows by their cell's first appearance.

    ``df`` has the :data:`COLUMNS` plus :data:`APPEND_KEY` (dropped on return). Rows without an
    append id (written by hand) form one append per contiguous run of a cell. Within the
    surviving append, a repeated :data:`ROW_KEY` keeps its last row.
    """
    if df.is_empty():
        return df.drop(APPEND_KEY)
    cell = pl.col("cell_id")
    run = (cell != cell.shift(1)).fill_null(True).cum_sum().cast(pl.String)
    return (
        df.with_row_index("_i")
        .with_columns(
            _block=pl.coalesce(pl.col(APPEND_KEY), pl.lit("run-") + run),
            _first=pl.col("_i").min().over("cell_id"),
        )
        .filter(pl.col("_block") == pl.col("_block").last().over("cell_id"))
        .filter(pl.col("_i") == pl.col("_i").max().over(list(ROW_KEY)))
        .sort(["_first", "_i"])
        .drop("_i", "_block", "_first", APPEND_KEY)
    )
