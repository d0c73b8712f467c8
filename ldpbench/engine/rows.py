"""The result row: its columns (the schema every row the runner produces has), and frames of rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

#: The row schema, in column order. Every row the runner produces has exactly these keys.
COLUMNS: dict[str, pl.DataType] = {
    "cell_id": pl.String(),  # hex hash of the cell identity, seed included
    "dataset": pl.String(),
    "users": pl.String(),  # "" when every user shares one epsilon
    "epsilon": pl.Float64(),  # NaN under personalized budgets
    "oracle": pl.String(),
    "pipeline": pl.String(),  # chain members joined by "+"
    "metric": pl.String(),
    "greater_is_better": pl.Boolean(),
    "repeat": pl.Int64(),
    "value": pl.Float64(),  # NaN when the cell failed
    "error": pl.String(),  # "ExcType: message" of the plugin that raised, else null
    "notes": pl.String(),  # warnings the pipeline's plugins left in Estimate.info ("; "-joined), else null
    "info": pl.String(),  # JSON object of the pipeline's Estimate.info["diagnostics"] (e.g. EM's alpha), else null
    "simulation": pl.String(),  # "aggregate" | "per-user"
    "n": pl.Int64(),
    "d": pl.Int64(),
    "fingerprint": pl.String(),  # hash of plugin names, versions and params behind the row
    "elapsed": pl.Float64(),  # seconds
    "where": pl.String(),  # failed rows: the plugin frames that raised ("file:line in func <- ..."), else null
    "theory": pl.Float64(),  # expected value of the unprocessed estimate's metric (ldpbench.engine.theory), else NaN
}
#: A row is identified by these. One cell has several oracle labels when its mechanism is a
#: protocol ("blender:blended", "blender:client", ...), so the oracle is part of the key.
ROW_KEY = ("cell_id", "oracle", "pipeline", "metric")
#: Extra key stamped on every row of one :meth:`ResultsStore.append`: the latest append of a cell
#: supersedes every earlier row of that cell (its labels may differ: a failed protocol cell has
#: one "blender" row per pipeline and metric, its rerun one per protocol output).
APPEND_KEY = "append_id"
_FLOAT_COLUMNS = frozenset(k for k, t in COLUMNS.items() if t == pl.Float64())
#: Columns added after schema 1 was first written; a row without them is still complete (null).
OPTIONAL_COLUMNS = frozenset({"notes", "where", "info", "theory"})
#: Columns every stored row must have to be read.
REQUIRED_COLUMNS = frozenset(COLUMNS) - OPTIONAL_COLUMNS


def empty_frame() -> pl.DataFrame:
    """An empty results frame with the fixed schema."""
    return pl.DataFrame(schema=COLUMNS)


def rows_to_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows (dicts) to a frame with the fixed schema; ``null`` floats become NaN.

    Keys outside :data:`COLUMNS` are dropped: the schema is the contract.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    # Column by column: polars takes Python and NumPy scalars, and refuses wrong types (strict).
    columns = {key: [row.get(key) for row in rows] for key in COLUMNS}
    df = pl.DataFrame(columns, schema=COLUMNS, strict=True)
    return df.with_columns(pl.col(sorted(_FLOAT_COLUMNS)).fill_null(math.nan))


def check_row(row: Mapping[str, Any]) -> None:
    missing = [k for k in COLUMNS if k not in row and k not in OPTIONAL_COLUMNS]
    if missing:
        # The runner builds rows; a missing key is a bug there, not a user mistake.
        raise ValueError(f"result row lacks column(s) {', '.join(missing)}: {dict(row)!r}")


def with_extra(frame: pl.DataFrame, extra: Sequence[str]) -> pl.DataFrame:
    return frame.with_columns([pl.lit(None, dtype=pl.String).alias(key) for key in extra])
