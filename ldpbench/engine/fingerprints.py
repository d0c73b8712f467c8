"""What a result row measures, and what code produced it: the two fingerprints every row carries.

``fingerprint`` (:func:`row_fingerprint`) keys a row by what it measures, so that ``compare``
refuses to compare rows that measure different things; ``code_fingerprint``
(:func:`row_code_fingerprint`) adds the identity of every plugin's code and of ldpbench's core, so
that a rerun reuses a stored row only if the very same code produced it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ldpbench.loading.identity import core_identity
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Entry, Pipeline, Spec

#: ``cell_id -> {(pipeline, metric): (fingerprint, code fingerprint)}``: the rows each cell produces
#: today (:func:`expected_rows`).
ExpectedRows = dict[str, dict[tuple[str, str], tuple[str, str]]]


def fingerprint(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def row_fingerprint(cell: Cell, pipeline: Pipeline, metric: Entry) -> str:
    """Hash of what a row's numbers measure: the dataset (parameters, content of its files), the
    budget, the mechanism, the simulation mode, every step of the pipeline and the metric, each
    with its parameters and algorithm version (and those of the prior families a parameter
    names). ``compare`` matches it: rows that differ here measure different things.

    Neither ldpbench's version nor a plugin distribution's: a release that leaves the algorithms
    alone must leave a CI baseline comparable, so that a 2x regression in it shows as ``worse``.
    The seed and repeat are in the ``cell_id``.
    """
    base = [cell.dataset.fingerprint_data(), cell.budget.label, cell.mechanism.fingerprint_data(), cell.simulation]
    if cell.poison is not None:  # an unattacked row keeps the fingerprint it had before attacks existed
        base.append(cell.poison.fingerprint_data())
    return fingerprint(base, [s.fingerprint_data() for s in pipeline.steps], metric.fingerprint_data())


def row_code_fingerprint(cell: Cell, pipeline: Pipeline, metric: Entry, measured: str | None = None) -> str:
    """Hash of the code behind a row: each plugin's whole identity (:mod:`ldpbench.loading.identity`:
    distribution version, algorithm version, source hash), ldpbench's core
    (:func:`~ldpbench.loading.identity.core_identity`) and the row's :func:`row_fingerprint`.
    A stored row is reused by a rerun only if this is unchanged: an edited plugin, built-in or
    ``--plugins-dir`` file, never serves its old numbers. ``measured``: the row's
    :func:`row_fingerprint`, when the caller has it."""
    entries = [cell.dataset, cell.mechanism, *pipeline.steps, metric]
    if cell.poison is not None and cell.poison.attack is not None:
        entries.append(cell.poison.attack)
    measured = measured or row_fingerprint(cell, pipeline, metric)
    return fingerprint(measured, [e.code_data() for e in entries], core_identity().token())


def expected_rows(spec: Spec, cells: Sequence[Cell]) -> ExpectedRows:
    """``cell_id -> {(pipeline, metric): (fingerprint, code fingerprint)}`` of the rows the cells
    produce today."""
    pairs = [(p, m) for p in spec.pipelines for m in spec.metrics]
    # Fingerprints do not depend on the repeat (nor the seed): hash each (dataset, budget,
    # mechanism) once, not once per repeat (a 20-repeat grid would hash everything 20 times).
    by_group: dict[tuple[int, int, int, str, int], dict[tuple[str, str], tuple[str, str]]] = {}
    out = {}
    for c in cells:
        group = (id(c.dataset), id(c.budget), id(c.mechanism), c.simulation, id(c.poison))
        if group not in by_group:
            by_group[group] = {
                (p.label, m.label): (fp := row_fingerprint(c, p, m), row_code_fingerprint(c, p, m, fp))
                for p, m in pairs
            }
        out[c.cell_id] = by_group[group]
    return out
