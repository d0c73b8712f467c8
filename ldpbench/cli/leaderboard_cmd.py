"""``ldpbench leaderboard RESULTS``: re-render the leaderboard of a stored run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ldpbench.errors import ExitCode, UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="aggregate and print the leaderboard of a results directory",
        description="Aggregate a stored run (its results.jsonl) into mean, standard error and 95% "
        "CI per (dataset, users, epsilon, oracle, pipeline, metric), and print it.",
        epilog="table and markdown show one table per dataset and metric (rows: oracle + "
        "pipeline, columns: epsilon); csv and json are tidy, one record per row (json is what "
        "`ldpbench compare` reads).",
    )
    parser.add_argument("results", metavar="RESULTS", help="a results directory or its results.jsonl")
    parser.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table", help="output format")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument(
        "--failures",
        action="store_true",
        help="list the failed result rows instead (one per failed repeat), with each plugin error and "
        "where in plugin code it was raised",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.leaderboard.load import run_leaderboard
    from ldpbench.leaderboard.render import render
    from ldpbench.results.read import read_run
    from ldpbench.stats.ties import manifest_alpha

    stored = read_run(args.results, quiet=True)  # skipped lines reported below, without a source line
    if stored.skipped_lines:
        print(
            f"ldpbench: warning: {stored.store.path}: skipped {stored.skipped_lines} torn or unreadable "
            "line(s); rerun the spec to redo their cells",
            file=sys.stderr,
        )
    text = (
        render_failures(stored.rows, args.format)
        if args.failures
        else render(run_leaderboard(stored), args.format, alpha=manifest_alpha(stored.manifest))
    )
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from None
    else:
        print(text, end="")
    return int(ExitCode.OK)


#: In the table and Markdown listings, errors are cut to this many characters (csv and json keep
#: them whole, as stored).
SHORT_ERROR = 300


def render_failures(df, fmt: str) -> str:  # type: ignore[no-untyped-def]
    """The failed rows of ``df`` (a results frame) in ``fmt``; a table says so when there are none."""
    import json

    from tabulate import tabulate

    from ldpbench.boundary.failures import FAILURE_COLUMNS, failed_rows
    from ldpbench.results.jsoncodec import dumps_json

    failed = failed_rows(df)
    records = failed.to_dicts()
    if fmt == "json":
        return dumps_json(records, indent=2) + "\n" if records else json.dumps([]) + "\n"
    if fmt == "csv":
        return failed.write_csv()
    if not records:
        return "no failed rows\n"
    cut = [
        [
            r[c] if c != "error" or r[c] is None or len(r[c]) <= SHORT_ERROR else r[c][:SHORT_ERROR] + "..."
            for c in FAILURE_COLUMNS
        ]
        for r in records
    ]
    return tabulate(cut, headers=list(FAILURE_COLUMNS), tablefmt="github" if fmt == "markdown" else "simple") + "\n"
