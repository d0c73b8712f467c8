"""Which leaderboard rows are the same numbers under different names?

Some post-processors coincide on some inputs: Calibrate with a power-law prior returns Power's
estimate, Norm leaves GRR's estimate (which already sums to 1) unchanged, Base-Pos and Post-Pos
agree once no negative remains. Drawn as separate lines they sit exactly on top of each other and
the legend lists both, so a figure draws such series once and names them together
("power = calibrate").

Identity is decided from the numbers, never from the names: two series are the same when their
per-repeat values agree at every point (every epsilon of the panel, every repeat, failures in the
same places). The per-repeat values come from the results rows (``results.jsonl``, or each
spec's folder of a merged CI leaderboard). A bare JSON leaderboard keeps no repeats; there the
aggregate (mean, standard error and the confidence interval) stands in for them, which two
different methods match only by coincidence of all their moments, and the report says which
evidence it used.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ldpbench.leaderboard.aggregate import GROUP_COLUMNS
from ldpbench.results.read import read_run
from ldpbench.results.store import RESULTS_FILE

#: Two values count as equal within this relative tolerance. Coinciding post-processors may reach
#: the same estimate by different float operations (last-bit differences), while distinct methods
#: differ by far more than this on at least one repeat.
RELATIVE_TOLERANCE = 1e-9

#: Key of a leaderboard row: its values in :data:`ldpbench.leaderboard.aggregate.GROUP_COLUMNS` order.
RowKey = tuple[Any, ...]


def row_key(row: Mapping[str, Any]) -> RowKey:
    """The row's (dataset, users, epsilon, oracle, pipeline, metric); NaN epsilon as ``None``."""
    key = []
    for column in GROUP_COLUMNS:
        value = row[column]
        if isinstance(value, float) and math.isnan(value):
            value = None
        key.append(value)
    return tuple(key)


def _results_folders(path: Path, manifest: Mapping[str, Any] | None) -> list[Path]:
    """The folders holding per-repeat rows for ``path``: itself, or each run of a merged leaderboard."""
    folder = path if path.is_dir() else path.parent
    if (folder / RESULTS_FILE).is_file():
        return [folder]
    runs = (manifest or {}).get("runs")
    if not isinstance(runs, dict):
        return []
    found = [folder / str(name) for name in runs]
    # All or nothing: identity judged on part of the rows would merge the others by aggregates.
    return found if found and all((f / RESULTS_FILE).is_file() for f in found) else []


def load_repeat_values(path: str | Path, manifest: Mapping[str, Any] | None = None) -> dict[RowKey, np.ndarray] | None:
    """Per-repeat values of every leaderboard row of a results folder, ordered by repeat.

    A failed repeat is NaN, so two rows that fail in the same repeats still compare equal. Returns
    ``None`` when no per-repeat rows exist (a bare JSON leaderboard).
    """
    folders = _results_folders(Path(path), manifest)
    if not folders:
        return None
    frames = []
    for folder in folders:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a torn last line: the report skips it, as its loader does
            # the rows of the folder's current spec only, as its leaderboard has them
            frames.append(read_run(folder, quiet=True).rows.select(*GROUP_COLUMNS, "repeat", "value", "error"))
    rows = pl.concat(frames, how="vertical_relaxed")
    value = pl.when(pl.col("error").is_null()).then(pl.col("value")).otherwise(None).fill_null(math.nan)
    grouped = (
        rows.with_columns(value=value)
        .sort("repeat", maintain_order=True)
        .group_by(list(GROUP_COLUMNS), maintain_order=True)
        .agg(pl.col("value"))
    )
    out: dict[RowKey, np.ndarray] = {}
    for row in grouped.iter_rows(named=True):
        out[row_key(row)] = np.asarray(row["value"], dtype=float)
    return out


def aggregate_values(lb: pl.DataFrame) -> dict[RowKey, np.ndarray]:
    """The stand-in for per-repeat values when none are stored: mean, stderr and CI per row."""
    columns = ["mean", "stderr", "ci_low", "ci_high", "failed"]
    return {
        row_key(row): np.asarray([math.nan if row[c] is None else float(row[c]) for c in columns], dtype=float)
        for row in lb.select(*GROUP_COLUMNS, *columns).iter_rows(named=True)
    }


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=RELATIVE_TOLERANCE, atol=0.0, equal_nan=True))


def identical_series(
    series: Mapping[Hashable, Sequence[tuple[Hashable, Hashable]]], values: Mapping[Hashable, np.ndarray]
) -> list[list[Hashable]]:
    """Group series whose values agree at every point.

    :param series: each series' points as (x, row key), in drawing order; two series can only be
        the same if they have the same x values in the same order.
    :param values: per-repeat values (or their aggregate stand-in) by row key.
    :returns: groups of series names in first-appearance order, each group in input order; a
        series with a row missing from ``values`` stays alone.
    """
    groups: list[list[Hashable]] = []
    signatures: list[tuple[list[Hashable], list[np.ndarray]] | None] = []
    for name, points in series.items():
        xs = [x for x, _ in points]
        arrays = [values.get(key) for _, key in points]
        if not points or any(a is None for a in arrays):
            groups.append([name])
            signatures.append(None)
            continue
        for group, other in zip(groups, signatures):
            if other is not None and other[0] == xs and all(_same(a, b) for a, b in zip(other[1], arrays)):
                group.append(name)
                break
        else:
            groups.append([name])
            signatures.append((xs, arrays))
    return groups
