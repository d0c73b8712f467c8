"""Which stored cells a run may reuse, which it must compute again, and why.

A stored cell is reused only if every row the spec expects of it is stored, finished, and carries
today's fingerprints (:mod:`ldpbench.engine.fingerprints`: what it measures, and the code that
measured it). A cell stored by other code or data is *stale*: the run recomputes it and says which
plugin changed, from the identities the previous run's manifest recorded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpbench.engine.fingerprints import ExpectedRows
from ldpbench.engine.rows import CODE_KEY
from ldpbench.loading.identity import CORE_KEY, entry_plugins, identity_changes, plugin_key
from ldpbench.loading.manager import Plugins
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Spec


def cell_status(rows: pl.DataFrame, expected: ExpectedRows) -> tuple[set[str], set[str]]:
    """Which cells may be reused, and which were stored by code or data that has changed.

    :param rows: stored rows (:meth:`~ldpbench.results.store.ResultsStore.load`).
    :param expected: ``cell_id -> {(pipeline, metric): (fingerprint, code fingerprint)}``: the
        rows each cell must have and the fingerprints of what would produce them now
        (:func:`ldpbench.engine.fingerprints.row_fingerprint`, :func:`~ldpbench.engine.fingerprints.row_code_fingerprint`).
    :returns: ``(done, stale)``: ``done`` cells have every expected row, finished (no error,
        a finite value) and with today's fingerprints; ``stale`` cells have a stored row of an
        expected (pipeline, metric) whose fingerprints differ, so its numbers came from another
        version of a plugin, other parameters or other data (or from a row without a code
        fingerprint, written before there was one: its code is unknown).
    """
    df = rows.filter(pl.col("cell_id").is_in(list(expected)))
    ok: dict[str, set[tuple[str, str]]] = {}
    bad: set[str] = set()
    stale: set[str] = set()
    columns = ("cell_id", "pipeline", "metric", "fingerprint", CODE_KEY, "error", "value")
    for cell, pipeline, metric, fp, code, error, value in df.select(columns).iter_rows():
        want = expected[cell].get((pipeline, metric))
        if want is None:
            continue  # a pipeline or metric no longer in the spec: not this run's business
        if (fp, code) != tuple(want):
            stale.add(cell)
        elif error is None and value is not None and math.isfinite(value):
            ok.setdefault(cell, set()).add((pipeline, metric))
        else:
            bad.add(cell)  # failed, or a hand-edited non-finite value: redo it
    done = {
        cell
        for cell, keys in expected.items()
        if cell not in stale and cell not in bad and set(keys) <= ok.get(cell, set())
    }
    return done, stale


def stale_reasons(
    plugins: Plugins, spec: Spec, stale: Sequence[Cell], old_manifest: Mapping[str, Any], now: Mapping[str, Any]
) -> list[str]:
    """Why stale cells changed: the plugins they use whose identity differs from the manifest of
    the run that stored them; else their spec entries, parameters or data files."""
    old = old_manifest.get("identities")
    changes = identity_changes(old, now) if isinstance(old, Mapping) else {}
    shared = [*(s for p in spec.pipelines for s in p.steps), *spec.metrics]
    shared += [p.attack for p in spec.poisons if p.attack is not None]
    involved: dict[str, None] = {CORE_KEY: None}  # the core is behind every cell
    for entry in [*dict.fromkeys(c.dataset for c in stale), *dict.fromkeys(c.mechanism for c in stale), *shared]:
        for info in entry_plugins(plugins, entry):
            involved[plugin_key(info)] = None
    reasons = [changes[k] for k in involved if k in changes]
    if not reasons and not isinstance(old, Mapping):
        return ["stored by an ldpbench that did not record plugin identities"]
    return reasons or ["a plugin, its parameters or a data file changed since they were stored"]


def incomplete_cells(
    rows: pl.DataFrame, expected: ExpectedRows, done: set[str], stale: set[str]
) -> tuple[set[str], str]:
    """The stored cells a run must compute again because they lack rows of a pipeline or metric
    that the spec has and their run did not (a metric added to the spec), and why, in words.

    A cell computes every pipeline and metric of the spec from one simulation, so such a cell is
    rerun whole; its earlier rows stay in ``results.jsonl``, superseded by the new ones.
    """
    stored = rows.filter(pl.col("cell_id").is_in(list(expected)))
    have: dict[str, set[tuple[str, str]]] = {}
    for cell, pipeline, metric in stored.select("cell_id", "pipeline", "metric").iter_rows():
        have.setdefault(cell, set()).add((pipeline, metric))
    cells: set[str] = set()
    lacking: dict[tuple[str, str], None] = {}
    for cell, pairs in have.items():
        if cell in done or cell in stale:
            continue
        absent = [k for k in expected[cell] if k not in pairs]
        if absent:
            cells.add(cell)
            lacking.update(dict.fromkeys(absent))
    if not cells:
        return cells, ""
    names = [f"{p} · {m}" for p, m in lacking]
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return cells, (
        f"their stored rows lack pipelines or metrics new to the spec ({shown}); a cell computes all of "
        f"its pipelines and metrics together, so it is rerun whole (its earlier rows stay in the folder, superseded)"
    )
