"""``ldpbench leaderboard RESULTS``: re-render the leaderboard of a stored run."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..errors import ExitCode, UsageError


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
    parser.add_argument(
        "--format", choices=("table", "markdown", "csv", "json"), default="table", help="output format"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..leaderboard import aggregate, render
    from ..stats.ties import manifest_alpha
    from ..store import RESULTS_FILE, ResultsStore

    path = Path(args.results)
    directory = path.parent if path.is_file() and path.name == RESULTS_FILE else path
    store = ResultsStore(directory)
    if not store.exists():
        raise UsageError(f"{path}: no {RESULTS_FILE} here (expected a directory written by `ldpbench run`)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, without a source line
        df = store.load()
    if store.skipped_lines:
        print(
            f"ldpbench: warning: {store.path}: skipped {store.skipped_lines} torn or unreadable "
            "line(s); rerun the spec to redo their cells",
            file=sys.stderr,
        )
    # A runner may record the spec's cell order; cells finish out of order on a process pool.
    manifest = store.read_manifest() if store.manifest_path.is_file() else None
    order = manifest.get("cell_order") if manifest else None
    text = render(aggregate(df, order=order, alpha=manifest_alpha(manifest)), args.format)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from None
    else:
        print(text, end="")
    return int(ExitCode.OK)
