"""The result row: what a cell yields, one per (output, pipeline, metric), and its one declared schema.

A row is built here (:func:`result_row`, :func:`failed_cell_rows`), appended by the store as one
JSON line, read back, and turned into a frame (:func:`rows_to_frame`); every key it may have at
any of those steps is declared once, below: the :data:`COLUMNS` readers see, and the
:data:`INTERNAL_COLUMNS` the harness keeps for itself.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from ldpbench.engine.fingerprints import row_code_fingerprint, row_fingerprint
from ldpbench.loading.manager import Plugins
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Entry, Pipeline

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
    # Poisoned cells only (docs/poisoning.md); an unattacked row has none of these keys (null).
    "attack": pl.String(),  # the attack's label
    "beta": pl.Float64(),  # m / (n + m): the fake users' fraction of the reports
    "fake_users": pl.Int64(),  # m
    "targets": pl.Int64(),  # the number of target items
}
#: Columns every row carries for the harness alone: leaderboards never show them.
INTERNAL_COLUMNS: dict[str, pl.DataType] = {
    # hash of the code behind the row (ldpbench.engine.fingerprints): what a resumed run matches
    "code_fingerprint": pl.String(),
}
#: Every column of a row, public then internal: a frame of rows has exactly these, in this order.
SCHEMA: dict[str, pl.DataType] = {**COLUMNS, **INTERNAL_COLUMNS}
#: The row key holding the code fingerprint.
CODE_KEY = "code_fingerprint"
#: A row is identified by these. One cell has several oracle labels when its mechanism is a
#: protocol ("blender:blended", "blender:client", ...), so the oracle is part of the key.
ROW_KEY = ("cell_id", "oracle", "pipeline", "metric")
#: The one key a stored line has beyond :data:`SCHEMA`: the store stamps it on every row of one
#: append, and reading consumes it: the latest append of a cell supersedes every earlier row of
#: that cell (its labels may differ: a failed protocol cell has one "blender" row per pipeline
#: and metric, its rerun one per protocol output).
APPEND_KEY = "append_id"
#: The columns of a poisoned cell's rows (docs/poisoning.md): absent from an unattacked row.
POISON_COLUMNS = ("attack", "beta", "fake_users", "targets")
_FLOAT_COLUMNS = frozenset(k for k, t in COLUMNS.items() if t == pl.Float64() and k not in POISON_COLUMNS)
#: Columns a row may lack and still be complete (null): those added after schema 1 was first
#: written, and the internal ones (a row written by hand has none).
OPTIONAL_COLUMNS = frozenset({"notes", "where", "info", "theory", *POISON_COLUMNS, *INTERNAL_COLUMNS})
#: Columns every stored row must have to be read.
REQUIRED_COLUMNS = frozenset(SCHEMA) - OPTIONAL_COLUMNS


def empty_frame() -> pl.DataFrame:
    """An empty frame of rows (:data:`SCHEMA`)."""
    return pl.DataFrame(schema=SCHEMA)


def rows_to_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows (dicts) to a frame of :data:`SCHEMA`; ``null`` floats become NaN.

    Keys outside the schema are dropped: the schema is the contract. A public column of the wrong
    type is refused (``TypeError`` or polars' error); an internal one that is not a string (a row
    edited by hand) is read as null, which no fingerprint matches.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    # Column by column: polars takes Python and NumPy scalars, and refuses wrong types (strict).
    columns = {key: [row.get(key) for row in rows] for key in COLUMNS}
    for key in INTERNAL_COLUMNS:
        columns[key] = [v if isinstance(v := row.get(key), str) else None for row in rows]
    df = pl.DataFrame(columns, schema=SCHEMA, strict=True)
    return df.with_columns(pl.col(sorted(_FLOAT_COLUMNS)).fill_null(math.nan))


def public_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame of rows without its :data:`INTERNAL_COLUMNS` (what a reader shows)."""
    return frame.drop([k for k in INTERNAL_COLUMNS if k in frame.columns])


def check_row(row: Mapping[str, Any]) -> None:
    missing = [k for k in SCHEMA if k not in row and k not in OPTIONAL_COLUMNS]
    if missing:
        # The runner builds rows; a missing key is a bug there, not a user mistake.
        raise ValueError(f"result row lacks column(s) {', '.join(missing)}: {dict(row)!r}")


def result_row(
    cell: Cell,
    oracle_label: str,
    pipeline: Pipeline,
    metric: Entry,
    *,
    value: float,
    error: str | None,
    greater: bool,
    notes: str | None = None,
    n: int = 0,
    d: int = 0,
    info: str | None = None,
    theory: float = math.nan,
    fake_users: int | None = None,
) -> dict[str, Any]:
    """One stored result row: a (cell, pipeline, metric) value, or a failure (NaN and its error).

    The ``fingerprint`` (:func:`row_fingerprint`) keys the row by what produced it, so a rerun
    reuses only rows whose code and data are unchanged and ``compare`` refuses to compare rows
    that measure different things.
    """
    ds, budget = cell.dataset, cell.budget
    row = {
        "cell_id": cell.cell_id,
        "dataset": ds.label,
        "users": budget.users_label if budget.groups else "",
        "epsilon": budget.epsilon_value,
        "oracle": oracle_label,
        "pipeline": pipeline.label,
        "metric": metric.label,
        "greater_is_better": greater,
        "repeat": cell.repeat,
        "value": float(value),
        "error": error,
        "notes": notes,
        "info": info,
        "simulation": cell.simulation,
        "n": int(n),
        "d": int(d),
        "fingerprint": (measured := row_fingerprint(cell, pipeline, metric)),
        "elapsed": 0.0,
        CODE_KEY: row_code_fingerprint(cell, pipeline, metric, measured),
        "theory": float(theory),
    }
    if cell.poison is not None:
        row.update(poison_columns(cell, fake_users))
    return row


def poison_columns(cell: Cell, fake_users: int | None) -> dict[str, Any]:
    """The :data:`POISON_COLUMNS` of an attacked cell's row; ``fake_users``: its m (None when
    the cell failed before it knew)."""
    poison = cell.poison
    assert poison is not None
    if poison.attack is None:  # the unattacked control
        return {"attack": "none", "beta": 0.0, "fake_users": 0, "targets": poison.targets.count}
    m = poison.fake_users if poison.fake_users is not None else fake_users
    return {"attack": poison.attack.label, "beta": poison.beta, "fake_users": m, "targets": poison.targets.count}


def failed_cell_rows(
    cell: Cell,
    pipelines: Sequence[Pipeline],
    metrics: Sequence[Entry],
    error: str,
    plugins: Plugins | None,
    n: int = 0,
    d: int = 0,
    where: str | None = None,
) -> list[dict[str, Any]]:
    """A failed row for every pipeline and metric of a cell whose dataset or mechanism failed (or
    whose worker process died): the same labels and fingerprints as its successful rows, so the
    leaderboard counts failed repeats of the same rows and a rerun replaces them."""
    rows = [
        result_row(
            cell,
            cell.output_label,
            pipeline,
            metric,
            value=math.nan,
            error=error,
            greater=greater_is_better(plugins, metric),
            n=n,
            d=d,
        )
        for pipeline in pipelines
        for metric in metrics
    ]
    for r in rows:
        r["where"] = where
    return rows


def greater_is_better(plugins: Plugins | None, metric: Entry) -> bool:
    # The spec validator already checked the name; without plugins (they failed to load) the
    # direction is unknown and the row is a failure anyway.
    return bool(plugins.get("metric", metric.name).cls.greater_is_better) if plugins else False


def stamp_elapsed(rows: list[dict[str, Any]], started: float) -> None:
    elapsed = time.perf_counter() - started
    for r in rows:
        r["elapsed"] = elapsed
