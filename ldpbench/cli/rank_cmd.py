"""``ldpbench rank RESULTS [--metric M]``: average ranks across a grid, Friedman, CD diagram."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ldpbench.errors import ExitCode


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rank",
        help="rank every oracle + pipeline across the cells of a grid (Friedman, Wilcoxon, CD diagram)",
        description="Average rank of every oracle · pipeline over all cells (dataset x users x epsilon) "
        "of one metric, the Friedman test, Holm-corrected pairwise Wilcoxon tests and a "
        "critical-difference diagram (Demšar, JMLR 2006) as a PNG. See docs/statistics.md.",
    )
    parser.add_argument("results", metavar="RESULTS", help="a results folder or a JSON leaderboard")
    parser.add_argument(
        "--metric",
        metavar="M",
        help="the metric to rank on: its label (topk-mse(k=10)) or, when one label has it, its plugin name "
        "(topk-mse), as compare --threshold takes (default: the first)",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--cd", metavar="PNG", help="where to write the CD diagram (default: RESULTS/cd-METRIC.png)")
    parser.add_argument(
        "--cd-top",
        type=int,
        default=None,
        metavar="N",
        help="name at most the best N methods in the CD diagram (default 20); all ranks are printed",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.errors import UsageError
    from ldpbench.leaderboard.load import load_leaderboard_frame
    from ldpbench.report.figures import slug
    from ldpbench.stats.ranks import CD_MAX_METHODS, format_ranks, grid_ranks, plot_cd

    if not 0 < args.alpha < 1:
        raise UsageError("--alpha must be between 0 and 1")
    top = CD_MAX_METHODS if args.cd_top is None else args.cd_top
    if top < 2:
        raise UsageError(f"--cd-top must be at least 2, got {top}")
    lb, _ = load_leaderboard_frame(args.results)
    result = grid_ranks(lb, metric_label(lb["metric"].unique(maintain_order=True).to_list(), args.metric), args.alpha)
    sys.stdout.write(format_ranks(result))
    folder = Path(args.results) if Path(args.results).is_dir() else Path(args.results).parent
    path = Path(args.cd) if args.cd else folder / f"cd-{slug(result.metric)}.png"
    plot_cd(result, path, max_methods=top)
    print(f"ldpbench: critical-difference diagram {path}", file=sys.stderr)
    return int(ExitCode.OK)


def metric_label(labels: list[str], metric: str | None) -> str | None:
    """``--metric``: a label as it is, else the one label whose plugin name it is (``topk-mse`` ->
    ``topk-mse(k=10)``); two labels of one plugin are a :class:`UsageError` naming both."""
    from ldpbench.errors import UsageError

    if metric is None or metric in labels:
        return metric
    named = [label for label in labels if label.split("(", 1)[0] == metric]
    if len(named) > 1:
        raise UsageError(f"--metric {metric} names {len(named)} metrics here; pick one: {', '.join(named)}")
    return named[0] if named else metric  # an unknown name: grid_ranks says which metrics there are
