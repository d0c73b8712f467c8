"""Reading a results folder back: the rows of the spec its manifest records, and the manifest.

``ldpbench leaderboard``, ``compare``, ``report`` and the CI gate all read a folder through
:func:`read_run`, so they agree with the run itself on which rows are the spec's
(:func:`this_spec_rows`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.engine.fingerprints import ExpectedRows
from ldpbench.engine.rows import CODE_KEY
from ldpbench.errors import UsageError
from ldpbench.results.manifest import expected_from_manifest
from ldpbench.results.store import MANIFEST_FILE, RESULTS_FILE, CorruptRowsWarning, ResultsStore, ResultsWarning


@dataclass
class StoredRun:
    """A results folder read back: its rows (latest append of each cell) of the spec its manifest
    records, its manifest, and the lines of ``results.jsonl`` skipped as torn or unreadable.

    A folder keeps the rows of an earlier version of its spec (another seed, an epsilon or a
    pipeline since removed: ``ldpbench run`` leaves them, so that going back resumes them). They
    are not this spec's numbers, so they are left out, counted in :attr:`left_out_cells`, and a
    :class:`~ldpbench.results.store.ResultsWarning` says so: a leaderboard, a comparison or a report of
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


def results_folder(path: str | Path) -> Path:
    """The results folder named by ``path``: the folder itself, or the one holding ``results.jsonl``."""
    path = Path(path)
    return path.parent if path.is_file() and path.name == RESULTS_FILE else path


def read_run(path: str | Path, *, quiet: bool = False) -> StoredRun:
    """Read a results folder (or its ``results.jsonl``): the rows of the spec its manifest records.

    :param quiet: do not warn about skipped lines (the caller reports :attr:`StoredRun.skipped_lines`).
    :raises UsageError: when there is no ``results.jsonl``.
    """
    store = ResultsStore(results_folder(path))
    if not store.exists():
        raise UsageError(f"{path}: no {RESULTS_FILE} here (expected a directory written by `ldpbench run`)")
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
            # A row whose checksum fails is corruption, not the torn last line of a kill: say so.
            warnings.simplefilter("default", CorruptRowsWarning)
        stored = store.load()
    manifest = store.read_manifest() if store.manifest_path.is_file() else None
    expected = expected_from_manifest(manifest)
    if expected is not None:
        rows = this_spec_rows(stored, expected)
        of_spec = this_spec_rows(stored, expected, match_code=False)
        of_cells = stored.filter(pl.col("cell_id").is_in(list(expected)))
        left_out = (stored.height - of_cells.height, of_cells.height - of_spec.height, of_spec.height - rows.height)
        other_cells = stored.filter(~pl.col("cell_id").is_in(list(expected)))["cell_id"].n_unique()
    else:  # a manifest written before it recorded the expected rows: its cells only
        rows, other_cells = current_spec_rows(stored, manifest)
        left_out = (0, 0, 0)
    _warn_left_out(store, other_cells, *left_out[1:])
    return StoredRun(store, rows, manifest, other_cells)


def this_spec_rows(rows: pl.DataFrame, expected: ExpectedRows, *, match_code: bool = True) -> pl.DataFrame:
    """The rows a spec produces today, in stored order: of its cells, pipelines and metrics, and
    with today's fingerprints (what they measure, and the code that measured them).

    The one definition of "this spec's rows", for the runner (``expected`` computed now) and every
    reader of the folder (``expected`` as the run's manifest recorded it): a folder may also hold
    rows of an earlier version of the spec (another seed, a pipeline since removed) or of its
    plugins, and one leaderboard must never mix numbers of two versions of a plugin.

    :param match_code: ``False``: the rows of the spec's cells, pipelines and metrics whatever
        produced them (to count those left out as stored by other code).
    """
    keys = ["cell_id", "pipeline", "metric", "fingerprint", CODE_KEY]
    today = pl.DataFrame(
        [(cell, p, m, fp, code) for cell, pairs in expected.items() for (p, m), (fp, code) in pairs.items()],
        schema=dict.fromkeys(keys, pl.String),
        orient="row",
    )
    on = keys if match_code else keys[:3]
    return rows.with_row_index("_order").join(today, on=on, how="semi").sort("_order").drop("_order")


def _warn_left_out(store: ResultsStore, other_cells: int, other_pairs: int, other_code: int) -> None:
    """Say what a reader leaves out of a folder, and why (the runner leaves out the same)."""
    if other_cells:
        warnings.warn(
            f"{store.directory}: left out {other_cells} stored cell(s) that the spec in its "
            f"{MANIFEST_FILE} does not have (rows of an earlier version of the spec)",
            ResultsWarning,
            stacklevel=3,
        )
    if other_pairs:
        warnings.warn(
            f"{store.directory}: left out {other_pairs} stored row(s) of pipelines or metrics that the spec "
            f"in its {MANIFEST_FILE} does not have (rows of an earlier version of the spec)",
            ResultsWarning,
            stacklevel=3,
        )
    if other_code:
        warnings.warn(
            f"{store.directory}: left out {other_code} stored row(s) of the spec's cells that other code or "
            f"data produced (a rerun that was interrupted); `ldpbench run` on the spec recomputes them",
            ResultsWarning,
            stacklevel=3,
        )


def current_spec_rows(rows: pl.DataFrame, manifest: dict[str, Any] | None) -> tuple[pl.DataFrame, int]:
    """The rows of the cells of the manifest's spec (its ``cell_order``), and how many other cells
    were stored. Without a manifest (or one without a cell order) every row is kept."""
    order = manifest.get("cell_order") if isinstance(manifest, dict) else None
    if not isinstance(order, list) or rows.is_empty():
        return rows, 0
    keep = pl.col("cell_id").is_in([str(c) for c in order])
    left_out = rows.filter(~keep)["cell_id"].n_unique()
    return (rows.filter(keep), left_out) if left_out else (rows, 0)
