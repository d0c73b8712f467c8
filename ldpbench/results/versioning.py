"""Schema versions of the files ldpbench writes, checked in one place (asv's ``Results`` model).

A results file starts with a header ``{"schema_version": 1, "kind": "ldpbench-results"}``; a run
manifest carries ``schema_version``; a JSON leaderboard is a bare list of rows (so that ``--format
json`` stays a list on stdout), and each row carries the ``schema_version``.

A file of an older or newer schema is refused with a message that says what to do, never misread,
unless a migration below reads it: today the only one reads a leaderboard written before
leaderboards were versioned (rows without ``schema_version``, same columns) as schema 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ldpbench.errors import LdpbenchError

#: Version of the results-file layout. Bump it when a column changes meaning or type.
SCHEMA_VERSION = 1
#: ``kind`` of the header record: tells a results file from any other JSONL.
RESULTS_KIND = "ldpbench-results"
#: The key holding the schema version: in the results header, the manifest, every leaderboard row.
SCHEMA_KEY = "schema_version"
#: The schema a leaderboard row without :data:`SCHEMA_KEY` is read as. Leaderboards were versioned
#: after schema 1 was fixed, with the columns unchanged: an unversioned file is schema 1, and
#: once :data:`SCHEMA_VERSION` moves past it, such a file is refused as older like any other.
UNVERSIONED_LEADERBOARD_SCHEMA = 1
#: How to regenerate an older results file (the default of :func:`check_schema_version`).
REGENERATE_RESULTS = "rerun the spec into a new results directory (`ldpbench run SPEC`) to regenerate it"
#: How to regenerate an older leaderboard: every writer of one reruns or re-aggregates its spec.
REGENERATE_LEADERBOARD = (
    "regenerate it with `ldpbench run SPEC` (which writes RESULTS/leaderboard.json); a CI baseline "
    "with scripts/update_ci_baseline.sh or `pytest --ldpbench-update-baseline`"
)


class ResultsSchemaError(LdpbenchError):
    """A results file this ldpbench cannot read: no header, or another schema version."""


def header_record() -> dict[str, Any]:
    """The first line of a results file."""
    return {"schema_version": SCHEMA_VERSION, "kind": RESULTS_KIND}


def check_schema_version(
    record: Any, where: str, what: str = "results file", regenerate: str = REGENERATE_RESULTS
) -> None:
    """Refuse a header (or manifest) that is not ours or has another schema version (asv style).

    :param regenerate: what to do with an older file (the message ends with it).
    """
    if not isinstance(record, dict) or SCHEMA_KEY not in record:
        raise ResultsSchemaError(
            f"{where}: not an ldpbench {what} (no schema_version header); "
            "it was not written by ldpbench, or by a pre-release without versioned results"
        )
    version = record[SCHEMA_KEY]
    if not isinstance(version, int) or isinstance(version, bool):
        raise ResultsSchemaError(f"{where}: schema_version must be an integer, got {version!r}")
    if version < SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{where}: {what} has schema version {version}, older than the version {SCHEMA_VERSION} "
            f"this ldpbench reads (written by an older ldpbench); no automatic migration exists "
            f"for it: {regenerate}"
        )
    if version > SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{where}: {what} has schema version {version}, newer than the version "
            f"{SCHEMA_VERSION} this ldpbench reads (written by a newer ldpbench): update ldpbench "
            "(`pip install -U ldpbench`)"
        )


def check_leaderboard_schema(rows: Iterable[Mapping[str, Any]], where: str) -> None:
    """Refuse a JSON leaderboard (its rows) of another schema version.

    A leaderboard is a bare list of rows, so the version travels in every row rather than in a
    header. A row without one is of :data:`UNVERSIONED_LEADERBOARD_SCHEMA` (written before
    leaderboards were versioned). Each distinct version is checked once, so a file's first
    foreign row names the problem.
    """
    seen: set[str] = set()
    for row in rows:
        version = row.get(SCHEMA_KEY, UNVERSIONED_LEADERBOARD_SCHEMA)
        if repr(version) in seen:  # repr: any JSON value, and True stays apart from 1
            continue
        seen.add(repr(version))
        # The same check and messages as a results file, with the leaderboard's own remedy.
        check_schema_version({SCHEMA_KEY: version}, where, what="leaderboard", regenerate=REGENERATE_LEADERBOARD)


def stamp_leaderboard_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Leaderboard rows as written to JSON: each with :data:`SCHEMA_KEY` first."""
    return [{SCHEMA_KEY: SCHEMA_VERSION, **row} for row in rows]
