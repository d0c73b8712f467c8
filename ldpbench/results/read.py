"""Reading a results folder back: the rows of the spec its manifest records, and the manifest.

``ldpbench leaderboard``, ``compare``, ``report`` and the CI gate all read a folder through
:func:`read_run`, so they agree on which rows are the spec's (:func:`current_spec_rows`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.errors import UsageError
from ldpbench.results.store import MANIFEST_FILE, RESULTS_FILE, ResultsStore, ResultsWarning

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


