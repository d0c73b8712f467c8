"""``ldpbench compare BASELINE CURRENT``: the noise-aware regression gate for CI.

Exit status: 0 when nothing got worse; 1 when a metric is worse beyond its threshold and its noise,
the baseline is the scaffold's example and the plugin's code is not (:mod:`ldpbench.leaderboard.provenance`),
a row fails in more repeats than in the baseline, a mean became NaN or infinite, a baseline row is
missing (unless ``--allow-missing``) or not comparable (unless ``--allow-not-comparable``); 2 on a
usage error (unreadable or malformed input, a baseline with a non-finite mean, bad ``--threshold``,
a threshold naming a metric in neither leaderboard).
"""

from __future__ import annotations

import argparse

from ldpbench.errors import ExitCode

_EPILOG = """\
BASELINE and CURRENT are JSON leaderboards (`ldpbench leaderboard DIR --format json`) or results
directories. Marks: + worse, - better, ! newly failing or failing in more repeats, ? missing
(in the baseline, not now), x not comparable (a plugin's algorithm_version, its parameters or its
data changed). A row is worse if its mean moved the wrong way by more than the threshold AND by
more than Z standard errors of the difference, or is NaN or infinite now. Missing rows fail the
gate unless --allow-missing, not-comparable rows unless --allow-not-comparable; new rows never do.
Where the manifests beside the leaderboards record the plugins' code (a digest of each plugin's
source), the verdict notes a plugin whose code changed since the baseline, and fails when the
baseline is the example code `ldpbench new-plugin` wrote and the plugin is no longer it. Rows
better beyond the noise get a note: a lower error can also mean a biased estimator (run
`ldpbench check-plugin NAME`).
Each compared row's "detectable" column is the smallest change the gate could flag on it,
max(threshold, Z * sqrt(se_baseline² + se_current²)); the verdict line gives its median and range.

examples:
  ldpbench compare reports/baseline.json results/ci --threshold mse:5% --only-changed
  ldpbench compare old/ new/ --threshold 2% --threshold ndcg:0.01 >> "$GITHUB_STEP_SUMMARY"
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare two leaderboards; exit 1 if a metric got worse beyond its noise",
        description="Compare a current leaderboard with a baseline, noise-aware (like asv compare).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("baseline", metavar="BASELINE", help="JSON leaderboard or results directory")
    parser.add_argument("current", metavar="CURRENT", help="JSON leaderboard or results directory")
    parser.add_argument(
        "-t",
        "--threshold",
        action="append",
        default=[],
        metavar="[METRIC:]LIMIT",
        help="how far a mean may move: 'mse:5%%' (relative), 'mse:0.001' (absolute); a bare "
        "'2%%' sets the default for every metric (default 5%%). Repeatable.",
    )
    parser.add_argument(
        "--z",
        type=float,
        default=None,
        metavar="Z",
        help="a change must also exceed Z * sqrt(se_baseline² + se_current²) (default 5)",
    )
    parser.add_argument("--format", choices=("markdown", "table", "json"), default="markdown", help="report format")
    parser.add_argument("--only-changed", action="store_true", help="leave unchanged rows out of the report")
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="do not fail when baseline rows are absent from CURRENT (a deliberate change of the spec)",
    )
    parser.add_argument(
        "--allow-not-comparable",
        action="store_true",
        help="do not fail when rows are not comparable (a plugin changed on purpose; re-baseline next)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.leaderboard.compare import DEFAULT_Z, compare, load_leaderboard, parse_thresholds, render_comparison

    thresholds = parse_thresholds(args.threshold)  # bad syntax fails before any file is read
    z = DEFAULT_Z if args.z is None else args.z
    baseline = load_leaderboard(args.baseline, "baseline")
    current = load_leaderboard(args.current, "current")
    from ldpbench.leaderboard.provenance import read_manifest

    manifests = (read_manifest(args.baseline), read_manifest(args.current))
    result = compare(
        baseline,
        current,
        thresholds,
        z,
        baseline_name=args.baseline,
        current_name=args.current,
        allow_missing=args.allow_missing,
        allow_not_comparable=args.allow_not_comparable,
        manifests=manifests,
    )
    print(render_comparison(result, args.format, only_changed=args.only_changed), end="")
    return int(ExitCode.REGRESSION if result.regressed else ExitCode.OK)
