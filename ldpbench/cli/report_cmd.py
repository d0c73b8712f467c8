"""``ldpbench report RESULTS``: a Markdown report with leaderboard tables and PNG figures."""

from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a Markdown report (tables + metric-vs-epsilon PNG figures) of a run",
        description="Write RESULTS/report/report.md with the leaderboard tables and one PNG per "
        "metric (one panel per dataset, x = epsilon, one line per oracle + pipeline, error bars = "
        "95% CI), like the papers' figures.",
        epilog="RESULTS is a folder written by `ldpbench run` (results.jsonl), a folder with a "
        "merged leaderboard.json (python -m ldpbench.testing.leaderboard_check), or a JSON "
        "leaderboard file.",
    )
    parser.add_argument("results", metavar="RESULTS", help="a results folder or a JSON leaderboard")
    parser.add_argument("-o", "--out", metavar="DIR", help="output folder (default: RESULTS/report)")
    parser.add_argument("--html", action="store_true",
                        help="also write one self-contained report.html (figures embedded, sortable tables)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import write_report

    report = write_report(args.results, args.out, html=args.html)
    print(
        f"ldpbench: report {report.markdown} ({report.rows} leaderboard rows, {len(report.figures)} figures)",
        file=sys.stderr,
    )
    if report.html:
        print(f"ldpbench: HTML report {report.html}", file=sys.stderr)
    return int(ExitCode.OK)
