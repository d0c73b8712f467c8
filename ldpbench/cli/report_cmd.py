"""``ldpbench report RESULTS``: a Markdown report with leaderboard tables and PNG figures."""

from __future__ import annotations

import argparse
import sys

from ldpbench.errors import ExitCode, UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a Markdown report (tables + metric-vs-epsilon PNG figures) of a run",
        description="Write RESULTS/report/report.md with the leaderboard tables and the PNG figures of "
        "each metric (x = epsilon; by default one panel per dataset and per value of whichever of "
        "oracle and pipeline has fewer values, so the more numerous share a panel, see --facet; at "
        "most 12 lines a panel, identical series drawn once, error bars = 95% CI), like the papers' "
        "figures, and a critical-difference diagram per metric where the grid can be ranked. "
        "With several RESULTS (oldest first), a history report: each row's metric across them, with "
        "the changes `ldpbench compare` would flag between consecutive ones marked.",
        epilog="RESULTS is a folder written by `ldpbench run` (results.jsonl), a folder with a "
        "merged leaderboard.json (python -m ldpbench.testing.gate), or a JSON "
        "leaderboard file.",
    )
    parser.add_argument(
        "results",
        metavar="RESULTS",
        nargs="+",
        help="a results folder or a JSON leaderboard; several (oldest first): a history report",
    )
    parser.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        help="output folder (default: RESULTS/report, or LAST/report-history for a history)",
    )
    parser.add_argument(
        "--html",
        action="store_true",
        help="also write one self-contained report.html (figures embedded, sortable tables)",
    )
    parser.add_argument(
        "--facet",
        metavar="COLS",
        help="the columns making the panels: one or two of "
        "dataset, oracle, pipeline, comma-separated (rows, then columns of the grid), or none; "
        "the others name the lines (default: dataset and whichever of oracle, pipeline has fewer values, "
        "so the more numerous share a panel; a history: dataset,oracle)",
    )
    parser.add_argument(
        "--only",
        metavar="COL=V[,V...]",
        action="append",
        default=[],
        help="keep only these values of a column (dataset, users, oracle, pipeline, metric), "
        "e.g. --only oracle=grr,olh --only metric=mse. Repeatable.",
    )
    parser.add_argument(
        "--max-lines",
        type=int,
        default=None,
        metavar="N",
        help="the most lines in one panel; more are split into parts (default 12)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="a history report even for one RESULTS folder: its subfolders holding a "
        "leaderboard, in the order of their manifests' creation time",
    )
    parser.add_argument(
        "-t",
        "--threshold",
        action="append",
        default=[],
        metavar="[METRIC:]LIMIT",
        help="history: the gate's threshold, as `ldpbench compare --threshold` (default 5%%)",
    )
    parser.add_argument(
        "--z",
        type=float,
        default=None,
        metavar="Z",
        help="history: the gate's noise multiple, as `ldpbench compare --z` (default 5)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.report.figures import DEFAULT_FACET, MAX_LINES, parse_facet, parse_only

    facet = parse_facet(args.facet)
    only = parse_only(args.only)
    args.max_lines = MAX_LINES if args.max_lines is None else args.max_lines
    if args.max_lines < 1:
        raise UsageError(f"--max-lines must be at least 1, got {args.max_lines}")
    if args.history or len(args.results) > 1:
        return _history(args, DEFAULT_FACET if facet is None else facet, only)
    if args.threshold or args.z is not None:
        raise UsageError("--threshold and --z apply to a history report (several RESULTS, or --history)")
    from ldpbench.report.markdown import write_report

    report = write_report(args.results[0], args.out, html=args.html, facet=facet, only=only, max_lines=args.max_lines)
    print(
        f"ldpbench: report {report.markdown} ({report.rows} leaderboard rows, {len(report.figures)} figures"
        + (f", {len(report.rank_figures)} critical-difference diagrams" if report.rank_figures else "")
        + ")",
        file=sys.stderr,
    )
    if report.html:
        print(f"ldpbench: HTML report {report.html}", file=sys.stderr)
    return int(ExitCode.OK)


def _history(args: argparse.Namespace, facet: tuple[str, ...], only: dict[str, list[str]]) -> int:
    from ldpbench.leaderboard.compare import DEFAULT_Z, parse_thresholds
    from ldpbench.report.history import discover_history, write_history

    thresholds = parse_thresholds(args.threshold)
    folders = args.results
    if args.history:
        if len(folders) != 1:
            raise UsageError(
                "--history takes one folder whose subfolders are the history; "
                "or list the folders themselves, oldest first, without --history"
            )
        folders = discover_history(folders[0])
    history = write_history(
        folders,
        args.out,
        html=args.html,
        facet=facet,
        only=only,
        max_lines=args.max_lines,
        thresholds=thresholds,
        z=DEFAULT_Z if args.z is None else args.z,
    )
    print(
        f"ldpbench: history report {history.markdown} ({len(history.points)} results, "
        f"{len(history.figures)} figures, {history.flagged} gate flags)",
        file=sys.stderr,
    )
    if history.html:
        print(f"ldpbench: HTML report {history.html}", file=sys.stderr)
    return int(ExitCode.OK)
