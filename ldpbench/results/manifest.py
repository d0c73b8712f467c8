"""What a run's ``manifest.json`` records: what was run, with what, where, and which rows it expects.

The resolved spec and its seed, every plugin with its version and identity, the privacy each
group of users received, the commit and the machine (down to what decides the last bits of a
number, :mod:`.machine`), and the rows the spec produces with their fingerprints
(:func:`expected_rows_record`), so that a reader of the folder keeps exactly the rows the run
kept (:func:`ldpbench.results.read.this_spec_rows`).
"""

from __future__ import annotations

import math
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ldpbench.boundary.contain import contained_call
from ldpbench.engine.fingerprints import ExpectedRows
from ldpbench.engine.shuffling import shuffle_record
from ldpbench.loading.manager import Plugins
from ldpbench.results import machine
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Spec
from ldpbench.util.provenance import portable_argv
from ldpbench.util.version import VERSION


def run_manifest(
    spec: Spec, plugins: Plugins, cells: Sequence[Cell], expected: ExpectedRows, identities: Mapping[str, Any]
) -> dict[str, Any]:
    """The manifest of a run of ``spec`` over ``cells`` (written before the first cell runs)."""
    return {
        "cell_order": [c.cell_id for c in cells],
        "ldpbench_version": VERSION,
        "spec": spec.resolved,
        "seed": spec.seed,
        "plugins": plugins.manifest(),
        "identities": dict(identities),
        "privacy": privacy_accounting(plugins, spec),
        "commit": git_commit(Path(spec.path).resolve().parent),
        "dirty": git_dirty(Path(spec.path).resolve().parent),
        "machine": machine_info(),
        "argv": portable_argv(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "expected_rows": expected_rows_record(cells, expected),
        # only under `shuffle:`, so that any other spec's manifest stays as it was
        **({"shuffle": record} if (record := shuffle_record(spec)) is not None else {}),
    }


def expected_rows_record(cells: Sequence[Cell], expected: ExpectedRows) -> dict[str, Any]:
    """The rows each cell produces, with their fingerprints, compactly: the distinct sets of
    ``[pipeline, metric, fingerprint, code fingerprint]`` (cells of one dataset, budget and
    mechanism share one), and each cell's set, in :data:`cell_order` order."""
    groups: dict[int, int] = {}
    sets: list[list[list[str]]] = []
    of_cell = []
    for c in cells:
        rows = expected[c.cell_id]
        if id(rows) not in groups:  # expected_rows shares one mapping among a group's cells
            groups[id(rows)] = len(sets)
            sets.append([[p, m, fp, code] for (p, m), (fp, code) in rows.items()])
        of_cell.append(groups[id(rows)])
    return {"sets": sets, "cells": of_cell}


def expected_from_manifest(manifest: Mapping[str, Any] | None) -> ExpectedRows | None:
    """The expected rows a manifest records (:func:`expected_rows_record`), or None when it records
    none (an older manifest) or they cannot be read."""
    record = manifest.get("expected_rows") if isinstance(manifest, Mapping) else None
    order = manifest.get("cell_order") if isinstance(manifest, Mapping) else None
    try:
        sets = [{(p, m): (fp, code) for p, m, fp, code in rows} for rows in record["sets"]]
        cells = record["cells"]
        if not (isinstance(order, list) and isinstance(cells, list) and len(cells) == len(order)):
            return None
        return {str(cell): sets[i] for cell, i in zip(order, cells)}
    except (TypeError, KeyError, ValueError, IndexError):
        return None


def privacy_accounting(plugins: Plugins, spec: Spec) -> list[dict[str, Any]]:
    """The guarantee each group of users received, per mechanism and budget (for the manifest)."""
    out = []
    for mech in spec.mechanisms:
        for budget in spec.budgets:
            if mech.kind == "protocol":
                # Plugin code outside any cell, before results are written: contained (exit 3).
                accounting = contained_call(
                    f"protocol '{mech.label}'",
                    "its constructor and privacy_accounting()",
                    lambda mech=mech, budget=budget: list(
                        plugins.create("protocol", mech.name, mech.param_dict).privacy_accounting(budget.epsilon_value)
                    ),
                )
                for e in accounting:
                    out.append({"mechanism": mech.label, "budget": budget.label, **e})
            elif budget.groups:
                for eps, count in budget.groups:
                    out.append(
                        {
                            "mechanism": mech.label,
                            "budget": budget.label,
                            "group": f"{count} users",
                            "model": "local",
                            "epsilon": str(eps),
                            "delta": 0.0,
                        }
                    )
            else:
                out.append(
                    {
                        "mechanism": mech.label,
                        "budget": budget.label,
                        "group": "all users",
                        "model": "local",
                        "epsilon": budget.epsilon_value,
                        "delta": 0.0,
                    }
                )
    for e in out:  # JSON has no inf
        if isinstance(e.get("epsilon"), float) and math.isinf(e["epsilon"]):
            e["epsilon"] = "inf"
    return out


def git_commit(path: Path) -> str | None:
    """The commit checked out at ``path``, or None outside a repository and before its first
    commit (where ``git rev-parse HEAD`` fails but still prints the word ``HEAD``)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=path,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def git_toplevel(path: Path) -> Path | None:
    """The top folder of the git work tree holding ``path``, or None outside one."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = out.stdout.strip()
    return Path(top).resolve() if out.returncode == 0 and top else None


def git_dirty(path: Path, exclude: Sequence[Path] = ()) -> bool | None:
    """Whether the work tree at ``path`` has uncommitted changes (tracked files changed, or files
    neither committed nor ignored): then the recorded commit did not produce the numbers exactly.
    None outside a repository or when git cannot say.

    ``exclude``: files or folders whose changes do not count (a baseline's own folder: refreshing
    a baseline rewrites it, and it is the output, not the code that produced the numbers).
    """
    cmd = ["git", "status", "--porcelain"]
    if exclude:
        cmd += ["-z", "--untracked-files=all"]  # one entry per file, paths from the top, unquoted
    try:
        out = subprocess.run(cmd, cwd=path, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    if not exclude:
        return bool(out.stdout.strip())
    root = git_toplevel(path)
    if root is None:
        return None
    skipped = []
    for p in exclude:
        try:
            skipped.append(Path(p).resolve().relative_to(root).as_posix())
        except ValueError:  # outside the repository: git cannot report it anyway
            continue
    entries = out.stdout.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        paths = [entry[3:]]
        if entry[0] in "RC":  # a rename or copy: the origin path follows as its own entry
            paths.append(entries[i] if i < len(entries) else "")
            i += 1
        for name in paths:
            name = name.rstrip("/")
            if not any(name == s or name.startswith(s + "/") or s == "." for s in skipped):
                return True
    return False


def machine_info() -> dict[str, Any]:
    """The manifest's ``machine``: where the numbers were computed, down to what decides their
    last bits (numpy's SIMD kernels, the BLAS, scipy's and polars's versions; see
    :mod:`ldpbench.results.machine`). Two runs are bit-identical only if these agree."""
    return {
        "node": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "numpy_simd": machine.numpy_simd(),
        "blas": machine.blas(),
        **machine.library_versions(),
        "numeric_env": machine.numeric_environment(),
    }
