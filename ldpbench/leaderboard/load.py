"""Reading leaderboards back, in one place: from a results folder (aggregated from its rows, the
ground truth) or from a JSON leaderboard file (``leaderboard.json``, a CI baseline).

``ldpbench leaderboard``, ``compare``, ``report`` and the CI gate all read through here, so they
agree on what a folder's leaderboard is (the spec's cell order and ``alpha`` from its manifest),
and a JSON leaderboard is version-checked (:mod:`ldpbench.results.versioning`, where the migrations
live) and type-checked field by field once. Writing: the runner writes ``leaderboard.json``
(:meth:`~ldpbench.results.store.ResultsStore.write_leaderboard`), rendered by
:func:`ldpbench.leaderboard.render.render`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.errors import LdpbenchError, UsageError
from ldpbench.leaderboard.aggregate import GROUP_COLUMNS, LEADERBOARD_COLUMNS, aggregate
from ldpbench.results.read import StoredRun, read_run, results_folder
from ldpbench.results.store import LEADERBOARD_FILE, MANIFEST_FILE, RESULTS_FILE
from ldpbench.results.versioning import REGENERATE_LEADERBOARD, SCHEMA_KEY, ResultsSchemaError, check_leaderboard_schema
from ldpbench.stats.ties import manifest_alpha
from ldpbench.util.safeio import MAX_LEADERBOARD_BYTES, parse_json, read_text_bounded

_FLOAT_FIELDS = ("epsilon", "mean", "stderr")
_REQUIRED_FIELDS = (*GROUP_COLUMNS, "greater_is_better", "mean", "stderr", "repeats", "failed")


def run_leaderboard(run: StoredRun) -> pl.DataFrame:
    """The leaderboard of a stored run, with the spec's cell order (cells finish out of order on a
    process pool) and the spec's ``alpha``, both recorded in the manifest."""
    order = run.manifest.get("cell_order") if run.manifest else None
    return aggregate(run.rows, order=order, alpha=manifest_alpha(run.manifest))


def load_leaderboard(path: str | Path, side: str = "leaderboard") -> list[dict[str, Any]]:
    """Leaderboard rows from a JSON leaderboard file or a results directory.

    A directory is aggregated from its ``results.jsonl`` (the ground truth); without one, its
    ``leaderboard.json`` is read. Every problem is a :class:`UsageError` naming ``side``.
    """
    path = Path(path)
    if path.is_dir():
        if (path / RESULTS_FILE).is_file():
            return _normalize(run_leaderboard(read_run(path)).to_dicts(), path, side)
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
        return run_leaderboard(run), run.manifest
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
    # Bounded like every read of a file the user names: a manifest nested 200,000 deep or of
    # 3 GiB was a RecursionError or MemoryError traceback; here it is no manifest.
    try:
        text = read_text_bounded(folder / MANIFEST_FILE, limit=MAX_LEADERBOARD_BYTES, what="manifest")
        manifest = parse_json(text, str(folder / MANIFEST_FILE), "run manifest")
    except LdpbenchError:
        return None
    return manifest if isinstance(manifest, dict) else None


#: Counts of repeats are int64 in every table that holds them.
_MAX_COUNT = 2**63 - 1


def _number(value: Any) -> bool:
    """A JSON number a float can hold: a 400-digit integer parses, but ``float()`` of it raises."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT)


#: Field -> (check, what the message says it must be). Every field a comparison reads is checked,
#: so a hand-edited or foreign file is a one-line error, never a TypeError deep in compare.
_FIELD_TYPES: dict[str, tuple[Any, str]] = {
    **{k: (lambda v: isinstance(v, str), "a string") for k in ("dataset", "users", "oracle", "pipeline", "metric")},
    "greater_is_better": (lambda v: isinstance(v, bool), "true or false"),
    **{k: (lambda v: v is None or _number(v), "a number or null") for k in _FLOAT_FIELDS},
    **{k: (_count, "a non-negative integer below 2**63") for k in ("repeats", "failed")},
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
