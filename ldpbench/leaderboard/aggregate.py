"""The leaderboard: results rows aggregated over repeats, ranked within their groups.

:func:`aggregate` turns the tidy rows of :mod:`ldpbench.results.store` into one row per (dataset,
users, epsilon, oracle, pipeline, metric) with the mean over repeats, its standard error and a 95%
confidence interval (docs/statistics.md), the best mean of each group and the rows tied with it
(:mod:`ldpbench.stats.ties`). Groups keep the order in which they first appear in the rows, which
is the spec's order. :mod:`.render` prints the result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ldpbench.engine.rows import rows_to_frame
from ldpbench.stats.paired import DEFAULT_ALPHA
from ldpbench.stats.ties import TIE_COLUMNS, tie_columns

#: One leaderboard row per combination of these.
GROUP_COLUMNS = ("dataset", "users", "epsilon", "oracle", "pipeline", "metric")
#: Mechanisms and pipelines compete within these groups for the ``best`` mark.
RANK_COLUMNS = ("dataset", "users", "epsilon", "metric")
#: Confidence level of ``ci_low`` / ``ci_high``.
CONFIDENCE = 0.95

LEADERBOARD_COLUMNS: dict[str, pl.DataType] = {
    "dataset": pl.String(),
    "users": pl.String(),
    "epsilon": pl.Float64(),
    "oracle": pl.String(),
    "pipeline": pl.String(),
    "metric": pl.String(),
    "greater_is_better": pl.Boolean(),
    "mean": pl.Float64(),  # over successful repeats; NaN if none succeeded
    "stderr": pl.Float64(),  # sample std (ddof=1) / sqrt(repeats); NaN for fewer than 2 repeats
    "ci_low": pl.Float64(),  # mean -/+ t_{0.975, repeats-1} * stderr; NaN for fewer than 2
    "ci_high": pl.Float64(),
    "repeats": pl.Int64(),  # successful repeats
    "failed": pl.Int64(),  # rows with an error
    "best": pl.Boolean(),
    "n": pl.Int64(),
    "d": pl.Int64(),
    "fingerprint": pl.String(),  # distinct fingerprints of the group joined by "|"
    "error": pl.String(),  # the first error message of the group, if any
    # Appended after schema 1 was fixed (additive: a reader of an older file sees them as null).
    **TIE_COLUMNS,
    "theory": pl.Float64(),  # expected mean from the oracle's variance formula (ldpbench.engine.theory); NaN if none
    "notes": pl.String(),  # the plugin warnings of the group's rows, each with its count of repeats; null if none
    "simulation": pl.String(),  # how the cells were simulated: "aggregate" or "per-user" ("|"-joined if both)
    # A longitudinal protocol's declared budgets (docs/longitudinal.md): the bound over any number of
    # reports of one value (inf: none) and one report's; null for every other mechanism.
    "epsilon_inf": pl.Float64(),
    "epsilon_1": pl.Float64(),
}
#: Appended to :data:`LEADERBOARD_COLUMNS` only when the rows carry them (a spec's ``shuffle:``,
#: docs/shuffling.md): a leaderboard of any other spec stays exactly as it was.
CENTRAL_COLUMNS: dict[str, pl.DataType] = {
    "central_epsilon": pl.Float64(),  # the group's central ε under shuffling; NaN where not covered
    "central_bound": pl.String(),  # the bound, or "not covered: <why>"
}


def aggregate(
    rows: pl.DataFrame | Iterable[Mapping[str, Any]],
    order: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> pl.DataFrame:
    """Aggregate result rows over repeats into the leaderboard.

    :param rows: a results frame (:meth:`ldpbench.results.store.ResultsStore.load`) or row dicts.
    :param order: cell ids in the spec's order. Cells finish in any order on a process pool, so
        the file's order is not the spec's; with ``order`` the rows are stably sorted by it first
        (cells not in it go last, in file order).
    :returns: one row per (dataset, users, epsilon, oracle, pipeline, metric), columns
        :data:`LEADERBOARD_COLUMNS`, in order of first appearance.

    ``mean`` and ``stderr`` use the successful repeats only (no error, value not NaN). With one
    successful repeat the noise is unknown: ``stderr`` and the CI are NaN, not 0 (``ldpbench
    compare`` then falls back to its threshold alone). ``best`` marks, within each (dataset,
    users, epsilon, metric), every (oracle, pipeline) whose mean equals the best one in the
    metric's direction (ties all marked); an all-failed row is never best. ``rank`` and
    ``tied_best`` (at level ``alpha``) come from the group's model confidence set over paired
    repeats (:mod:`ldpbench.stats.paired`); ``tied_best`` is null where too few repeats allow a
    verdict.
    """
    # Imported here: scipy costs a quarter second that `compare` of two JSON files never needs.
    from scipy.special import stdtrit  # the Student t quantile (scipy.stats is slower to import)

    df = rows if isinstance(rows, pl.DataFrame) else rows_to_frame(rows)
    if order is not None and not df.is_empty():
        rank = {cell: i for i, cell in enumerate(order)}
        df = (
            df.with_columns(_rank=pl.col("cell_id").replace_strict(rank, default=len(rank), return_dtype=pl.Int64))
            .sort("_rank", maintain_order=True)
            .drop("_rank")
        )
    if "theory" not in df.columns:  # rows written before the column existed
        df = df.with_columns(theory=pl.lit(math.nan, dtype=pl.Float64))
    for column in ("notes", "simulation"):  # rows written before the column existed
        if column not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=pl.String).alias(column))
    for column in ("epsilon_inf", "epsilon_1"):
        if column not in df.columns:
            df = df.with_columns(pl.lit(math.nan, dtype=pl.Float64).alias(column))
    value = pl.col("value")
    ok = (pl.col("error").is_null() & value.is_not_null() & value.is_not_nan()).fill_null(False)
    central = "central_bound" in df.columns and df["central_bound"].null_count() < df.height
    extra = (
        # a failed repeat's row has no n, so no central epsilon: take a successful one's, if any
        dict(
            central_epsilon=pl.col("central_epsilon").filter(ok).first(),
            central_bound=pl.coalesce(pl.col("central_bound").filter(ok).first(), pl.col("central_bound").first()),
        )
        if central
        else {}
    )
    good = value.filter(ok)
    # Within a group, sum the repeats in repeat order: a float sum depends on its order, and
    # cells finish in any order on a process pool; the groups keep their first appearance.
    if not df.is_empty():
        df = (
            df.with_row_index("_i")
            .with_columns(_first=pl.col("_i").min().over(list(GROUP_COLUMNS)))
            .sort(["_first", "repeat", "cell_id", "_i"])
            .drop("_i", "_first")
        )
    lb = df.group_by(list(GROUP_COLUMNS), maintain_order=True).agg(
        greater_is_better=pl.col("greater_is_better").first(),
        mean=good.mean(),
        std=good.std(ddof=1),
        repeats=ok.sum().cast(pl.Int64),
        failed=pl.col("error").is_not_null().sum().cast(pl.Int64),
        n=pl.col("n").first(),
        d=pl.col("d").first(),
        fingerprint=pl.col("fingerprint").drop_nulls().unique().sort().str.join("|"),
        error=pl.col("error").drop_nulls().first(),
        theory=pl.col("theory").filter(ok).mean(),
        _notes=pl.col("notes").drop_nulls(),
        simulation=pl.col("simulation").drop_nulls().unique().sort().str.join("|"),
        epsilon_inf=pl.col("epsilon_inf").drop_nans().first(),
        epsilon_1=pl.col("epsilon_1").drop_nans().first(),
        _rows=pl.len(),
        **extra,
    )
    lb = lb.with_columns(notes=_counted_notes(lb["_notes"], lb["_rows"])).drop("_notes", "_rows")
    repeats = lb["repeats"].to_numpy().astype(float)
    std = lb["std"].fill_null(math.nan).to_numpy().astype(float)
    mean = lb["mean"].fill_null(math.nan).to_numpy().astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        stderr = np.where(repeats >= 2, std / np.sqrt(repeats), math.nan)
        tq = stdtrit(np.maximum(repeats - 1, 1), 0.5 + CONFIDENCE / 2)
        half = np.where(repeats >= 2, tq * stderr, math.nan)
    lb = lb.with_columns(
        mean=pl.Series(mean, dtype=pl.Float64),
        stderr=pl.Series(stderr, dtype=pl.Float64),
        ci_low=pl.Series(mean - half, dtype=pl.Float64),
        ci_high=pl.Series(mean + half, dtype=pl.Float64),
        fingerprint=pl.when(pl.col("fingerprint") == "").then(None).otherwise(pl.col("fingerprint")),
        simulation=pl.when(pl.col("simulation") == "").then(None).otherwise(pl.col("simulation")),
    )
    # Rank on a signed score so that "best" is always a maximum; NaN means "no score".
    score = (
        pl.when(pl.col("mean").is_nan())
        .then(None)
        .otherwise(pl.when(pl.col("greater_is_better")).then(pl.col("mean")).otherwise(-pl.col("mean")))
    )
    lb = lb.with_columns(_score=score).with_columns(
        best=(pl.col("_score") == pl.col("_score").max().over(list(RANK_COLUMNS))).fill_null(False)
    )
    lb = tie_columns(lb, df.filter(ok), GROUP_COLUMNS, RANK_COLUMNS, alpha)
    columns = {**LEADERBOARD_COLUMNS, **(CENTRAL_COLUMNS if central else {})}
    return lb.select([pl.col(k).cast(t) for k, t in columns.items()])


def _counted_notes(notes: pl.Series, rows: pl.Series) -> pl.Series:
    """Each group's distinct warnings with how many of its rows carry them, in first-seen order:
    ``"ibu hit its iteration cap (200) ... (3 of 20 rows)"``; null for a group without any.

    A Python loop over the groups that have notes only: warnings are rare, and a group's rows
    carry the same few strings."""
    out: list[str | None] = [None] * len(notes)
    for i, (group, total) in enumerate(zip(notes.to_list(), rows.to_list())):
        if group:
            counts: dict[str, int] = {}
            for note in group:
                counts[note] = counts.get(note, 0) + 1
            out[i] = "; ".join(f"{note} ({k} of {total} rows)" for note, k in counts.items())
    return pl.Series("notes", out, dtype=pl.String)


# ----------------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------------
