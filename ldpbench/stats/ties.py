"""The leaderboard's ``rank``, ``tied_best``, ``p_value`` and difference interval columns.

:func:`tie_columns` groups the successful result rows by leaderboard group and repeat and hands
each rank group (dataset, users, epsilon, metric) to :func:`.paired.compare_with_best`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ldpbench.stats.paired import DEFAULT_ALPHA, compare_with_best

#: The columns this module adds to a leaderboard, with their types.
TIE_COLUMNS: dict[str, pl.DataType] = {
    "rank": pl.Int64(),  # 1 = best mean in its group (dataset, users, epsilon, metric)
    "tied_best": pl.Boolean(),  # in the model confidence set at alpha; null: too few repeats to decide
    "p_value": pl.Float64(),  # the row's model confidence set p-value; 1 for the best
    "diff_low": pl.Float64(),  # paired bootstrap 95% interval of mean(row - best)
    "diff_high": pl.Float64(),
}


def _key(values: Sequence[Any]) -> tuple:
    # NaN != NaN: a personalized budget's epsilon would never find its own group.
    return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in values)


def tie_columns(
    lb: pl.DataFrame,
    good: pl.DataFrame,
    group_columns: Sequence[str],
    rank_columns: Sequence[str],
    alpha: float = DEFAULT_ALPHA,
) -> pl.DataFrame:
    """``lb`` with :data:`TIE_COLUMNS` appended.

    :param lb: the leaderboard (one row per ``group_columns``), with ``greater_is_better``.
    :param good: the successful result rows: ``group_columns`` + ``repeat`` + ``value``.
    :param rank_columns: the rows of one rank group compete with each other.
    """
    per_row: dict[tuple, dict[int, list[float]]] = {}
    cols = list(group_columns)
    for row in good.select(cols + ["repeat", "value"]).iter_rows():
        per_row.setdefault(_key(row[:-2]), {}).setdefault(int(row[-2]), []).append(float(row[-1]))
    index = {c: i for i, c in enumerate(cols)}
    rank_idx = [index[c] for c in rank_columns]
    keys = [_key(r) for r in lb.select(cols).iter_rows()]
    gib = lb["greater_is_better"].to_list()
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(tuple(k[j] for j in rank_idx), []).append(i)
    out: dict[str, list[Any]] = {c: [None] * lb.height for c in TIE_COLUMNS}
    for members in groups.values():
        repeats = sorted({r for i in members for r in per_row.get(keys[i], {})})
        pos = {r: j for j, r in enumerate(repeats)}
        matrix = np.full((len(members), len(repeats)), np.nan)
        for m, i in enumerate(members):
            for r, vals in per_row.get(keys[i], {}).items():
                matrix[m, pos[r]] = sum(vals) / len(vals)
        direction = next((g for g in (gib[i] for i in members) if g is not None), False)
        for i, res in zip(members, compare_with_best(matrix, bool(direction), alpha)):
            out["rank"][i] = res.rank
            out["tied_best"][i] = res.tied_best
            out["p_value"][i] = res.p_value
            out["diff_low"][i] = res.diff_low
            out["diff_high"][i] = res.diff_high
    return lb.with_columns([pl.Series(c, out[c], dtype=t, strict=False) for c, t in TIE_COLUMNS.items()])


def manifest_alpha(manifest: Any) -> float:
    """The spec's ``alpha`` recorded in a run manifest (the default when absent or malformed)."""
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    alpha = spec.get("alpha") if isinstance(spec, dict) else None
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and 0 < alpha < 1:
        return float(alpha)
    return DEFAULT_ALPHA
