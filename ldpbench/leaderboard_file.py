"""Reading leaderboards back, in one place: from a results folder (aggregated from its rows, the
ground truth) or from a JSON leaderboard file (``leaderboard.json``, a CI baseline).

``ldpbench leaderboard``, ``compare``, ``report`` and the CI gate all read through here, so they
agree on what a folder's leaderboard is (the spec's cell order and ``alpha`` from its manifest),
and a JSON leaderboard is version-checked (:mod:`ldpbench.versioning`, where the migrations live)
and type-checked field by field once. Writing: the runner writes ``leaderboard.json``
(:meth:`~ldpbench.store.ResultsStore.write_leaderboard`), rendered by
:func:`ldpbench.leaderboard.render`.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.errors import UsageError
from ldpbench.leaderboard import GROUP_COLUMNS, LEADERBOARD_COLUMNS, aggregate
from ldpbench.stats.ties import manifest_alpha
from ldpbench.store import LEADERBOARD_FILE, MANIFEST_FILE, RESULTS_FILE, ResultsStore, ResultsWarning
from ldpbench.util.safeio import MAX_LEADERBOARD_BYTES, parse_json, read_text_bounded
from ldpbench.versioning import REGENERATE_LEADERBOARD, SCHEMA_KEY, ResultsSchemaError, check_leaderboard_schema

_FLOAT_FIELDS = ("epsilon", "mean", "stderr")
_REQUIRED_FIELDS = (*GROUP_COLUMNS, "greater_is_better", "mean", "stderr", "repeats", "failed")


@dataclass
class StoredRun:
    """A results folder read back: its rows (latest append of each cell) of the spec its manifest
    records, its manifest, and the lines of ``results.jsonl`` skipped as torn or unreadable.

    A folder keeps the rows of an earlier version of its spec (another seed, an epsilon or a
    pipeline since removed: ``ldpbench run`` leaves them, so that going back resumes them). They
    are not this spec's numbers, so they are left out, counted in :attr:`left_out_cells`, and a
    :class:`~ldpbench.store.ResultsWarning` says so: a leaderboard, a comparison or a report of
    the folder shows what the last ``ldpbench run`` showed.
    """

    store: ResultsStore
    rows: pl.DataFrame
    manifest: dict[str, Any] | None
    #: cells in ``results.jsonl`` that the manifest's spec does not have
    left_out_cells: int = 0

    @property
    def skipped_lines(self) -> int:
        return self.store.skipped_lines

    def leaderboard(self) -> pl.DataFrame:
        """The leaderboard, with the spec's cell order (cells finish out of order on a process
        pool) and the spec's ``alpha``, both recorded in the manifest."""
        order = self.manifest.get("cell_order") if self.manifest else None
        return aggregate(self.rows, order=order, alpha=manifest_alpha(self.manifest))


def results_folder(path: str | Path) -> Path:
    """The results folder named by ``path``: the folder itself, or the one holding ``results.jsonl``."""
    path = Path(path)
    return path.parent if path.is_file() and path.name == RESULTS_FILE else path


def read_run(path: str | Path, *, quiet: bool = False) -> StoredRun:
    """Read a results folder (or its ``results.jsonl``).

    :param quiet: do not warn about skipped lines (the caller reports :attr:`StoredRun.skipped_lines`).
    :raises UsageError: when there is no ``results.jsonl``.
    """
    store = ResultsStore(results_folder(path))
    if not store.exists():
        raise UsageError(f"{path}: no {RESULTS_FILE} here (expected a directory written by `ldpbench run`)")
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        rows = store.load()
    manifest = store.read_manifest() if store.manifest_path.is_file() else None
    rows, left_out = current_spec_rows(rows, manifest)
    if left_out:
        warnings.warn(
            f"{store.directory}: left out {left_out} stored cell(s) that the spec in its "
            f"{MANIFEST_FILE} does not have (rows of an earlier version of the spec)",
            ResultsWarning,
            stacklevel=2,
        )
    return StoredRun(store, rows, manifest, left_out)


def current_spec_rows(rows: pl.DataFrame, manifest: dict[str, Any] | None) -> tuple[pl.DataFrame, int]:
    """The rows of the cells of the manifest's spec (its ``cell_order``), and how many other cells
    were stored. Without a manifest (or one without a cell order) every row is kept."""
    order = manifest.get("cell_order") if isinstance(manifest, dict) else None
    if not isinstance(order, list) or rows.is_empty():
        return rows, 0
    keep = pl.col("cell_id").is_in([str(c) for c in order])
    left_out = rows.filter(~keep)["cell_id"].n_unique()
    return (rows.filter(keep), left_out) if left_out else (rows, 0)


def load_leaderboard(path: str | Path, side: str = "leaderboard") -> list[dict[str, Any]]:
    """Leaderboard rows from a JSON leaderboard file or a results directory.

    A directory is aggregated from its ``results.jsonl`` (the ground truth); without one, its
    ``leaderboard.json`` is read. Every problem is a :class:`UsageError` naming ``side``.
    """
    path = Path(path)
    if path.is_dir():
        if (path / RESULTS_FILE).is_file():
            return _normalize(read_run(path).leaderboard().to_dicts(), path, side)
        if (path / LEADERBOARD_FILE).is_file():
            path = path / LEADERBOARD_FILE
        else:
            raise UsageError(f"{side} {path}: a directory with neither {RESULTS_FILE} nor {LEADERBOARD_FILE}")
    if not path.exists():
        raise UsageError(f"{side} {path}: no such file or directory")
    # Bounded and non-blocking: a FIFO, /dev/zero or a huge file is a one-line error, not a hang.
    text = read_text_bounded(path, limit=MAX_LEADERBOARD_BYTES, what=side)
    data = parse_json(text, f"{side} {path}", "leaderboard")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise UsageError(
            f"{side} {path}: not a JSON leaderboard (a list of row objects, as written by "
            "`ldpbench leaderboard --format json`)"
        )
    try:
        # Before the fields: a newer file may lack today's fields, and its version says why.
        check_leaderboard_schema(data, f"{side} {path}")
    except ResultsSchemaError as exc:
        raise UsageError(str(exc)) from None
    return _normalize(data, path, side)


def load_leaderboard_frame(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any] | None]:
    """The leaderboard of a results folder (or a JSON leaderboard file) and its manifest, if any."""
    folder = results_folder(path)
    if folder.is_dir() and (folder / RESULTS_FILE).is_file():
        run = read_run(folder, quiet=True)  # a torn last line: the run resumes it, readers skip it
        return run.leaderboard(), run.manifest
    if folder.is_dir() and not (folder / LEADERBOARD_FILE).is_file():
        raise UsageError(
            f"{folder}: neither {RESULTS_FILE} nor {LEADERBOARD_FILE} here (expected a folder written by `ldpbench run`)"
        )
    rows = load_leaderboard(folder, "results")  # a JSON leaderboard: file, or folder holding one
    frame = pl.DataFrame(
        [{k: r.get(k) for k in LEADERBOARD_COLUMNS} for r in rows], schema=LEADERBOARD_COLUMNS, strict=False
    )
    return frame.with_columns(pl.col(pl.Float64).fill_null(math.nan)), _beside_manifest(folder)


def _beside_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest next to a JSON leaderboard, for a report's header only: unreadable means none."""
    folder = path if path.is_dir() else path.parent
    if not (folder / MANIFEST_FILE).is_file():
        return None
    try:
        return json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except ValueError:
        return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


#: Field -> (check, what the message says it must be). Every field a comparison reads is checked,
#: so a hand-edited or foreign file is a one-line error, never a TypeError deep in compare.
_FIELD_TYPES: dict[str, tuple[Any, str]] = {
    **{k: (lambda v: isinstance(v, str), "a string") for k in ("dataset", "users", "oracle", "pipeline", "metric")},
    "greater_is_better": (lambda v: isinstance(v, bool), "true or false"),
    **{k: (lambda v: v is None or _number(v), "a number or null") for k in _FLOAT_FIELDS},
    **{k: (_count, "a non-negative integer") for k in ("repeats", "failed")},
    **{k: (lambda v: v is None or isinstance(v, str), "a string or null") for k in ("fingerprint", "error")},
}


def _normalize(rows: list[dict[str, Any]], path: Path, side: str) -> list[dict[str, Any]]:
    out = []
    for i, row in enumerate(rows):
        missing = [k for k in _REQUIRED_FIELDS if k not in row]
        if missing:
            hint = ""
            if SCHEMA_KEY not in row:  # unversioned and incomplete: not the pre-versioning layout
                hint = f" (no schema_version: written by an older ldpbench or by hand; {REGENERATE_LEADERBOARD})"
            raise UsageError(f"{side} {path}: row {i} lacks {', '.join(missing)}{hint}")
        row = {k: v for k, v in row.items() if k != SCHEMA_KEY}  # checked; same rows as from a folder
        for key, (ok, what) in _FIELD_TYPES.items():
            if key in row and not ok(row[key]):
                raise UsageError(f"{side} {path}: row {i}: {key} must be {what}, got {_short(row[key])}")
        for key in _FLOAT_FIELDS:
            value = row[key]
            row[key] = math.nan if value is None else float(value)
        row.setdefault("fingerprint", None)
        row.setdefault("error", None)
        row["failed"] = int(row["failed"] or 0)
        row["repeats"] = int(row["repeats"] or 0)
        out.append(row)
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
