"""``ldpbench run SPEC``: run a spec and print its leaderboard."""

from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode
from ._common import add_spec_plugin_options, load_plugins_and_spec

FORMATS = ("table", "markdown", "csv", "json")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a spec and print its leaderboard", description=__doc__)
    p.add_argument("spec", help="the YAML spec file")
    p.add_argument("--format", choices=FORMATS, default="table", help="leaderboard format (default: table)")
    p.add_argument("--out", metavar="DIR", help="results folder (default: results/<spec name>)")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: one per core)")
    p.add_argument("--executor", metavar="NAME", help="executor plugin (in-process, process-pool, ...)")
    p.add_argument("--rerun", action="store_true", help="recompute every cell, ignoring stored results")
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show the progress bar")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    add_spec_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..leaderboard import render
    from ..runner import run_spec
    from ..theory import theory_warnings

    if args.workers is not None and args.workers < 0:
        raise UsageError("--workers must be 0 (one per core) or more")
    plugins, spec, dirs = load_plugins_and_spec(args.spec, args)
    outcome = run_spec(
        spec,
        plugins,
        args.out,
        workers=args.workers,
        executor=args.executor,
        plugins_dirs=dirs,
        progress=args.progress,
        rerun=args.rerun,
    )
    text = render(outcome.leaderboard, args.format)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    (outcome.out_dir / "leaderboard.json").write_text(render(outcome.leaderboard, "json"))
    print(
        f"ldpbench: {outcome.cells_total} cells ({outcome.cells_run} run, {outcome.cells_skipped} already done) "
        f"in {outcome.seconds:.1f} s; results in {outcome.out_dir}",
        file=sys.stderr,
    )
    far = theory_warnings(outcome.leaderboard)
    if far:  # how a wrong oracle is noticed without a test (docs/statistics.md)
        _summarize(f"{len(far)} rows far from the oracle's theoretical error (check the oracle's variance or sampler)", far, 10, "rows")
    if outcome.noted_rows:
        _summarize(f"{outcome.noted_rows} result rows carry plugin warnings (column 'notes')", outcome.notes, 5, "warnings")
    if outcome.failed_rows:
        _summarize(f"{outcome.failed_rows} result rows failed", outcome.errors, 10, "errors")
        return int(ExitCode.PLUGIN)
    return int(ExitCode.OK)


def _summarize(headline: str, messages: list[str], most: int, what: str) -> None:
    """``headline:`` then the first ``most`` distinct messages, indented, on stderr."""
    print(f"ldpbench: {headline}:", file=sys.stderr)
    for message in messages[:most]:
        print(f"  {message}", file=sys.stderr)
    if len(messages) > most:
        print(f"  ... and {len(messages) - most} more distinct {what}", file=sys.stderr)
