"""``ldpbench run SPEC``: run a spec and print its leaderboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from ldpbench.cli._common import add_spec_plugin_options, load_plugins_and_spec
from ldpbench.errors import ExitCode, ParamError, UsageError
from ldpbench.spec.model import Entry

FORMATS = ("table", "markdown", "csv", "json")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a spec and print its leaderboard", description=__doc__)
    p.add_argument("spec", help="the YAML spec file")
    p.add_argument("--format", choices=FORMATS, default="table", help="leaderboard format (default: table)")
    p.add_argument("--out", metavar="DIR", help="results folder (default: results/<spec name>)")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: one per core)")
    p.add_argument("--executor", metavar="NAME", help="executor plugin (in-process, process-pool, ...)")
    p.add_argument(
        "--executor-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the executor, e.g. scheduler=tcp://host:8786 (repeatable; beats the spec's)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler to connect to: short for --executor dask --executor-param scheduler=ADDRESS",
    )
    p.add_argument(
        "--cell-timeout",
        type=float,
        metavar="SECONDS",
        help="fail a cell whose plugins run longer than SECONDS (beats the spec's cell_timeout; default: no limit)",
    )
    p.add_argument("--rerun", action="store_true", help="recompute every cell, ignoring stored results")
    p.add_argument(
        "--no-recompute",
        dest="recompute",
        action="store_false",
        help="refuse (exit 2) instead of rerunning stored cells whose plugins, parameters or data changed",
    )
    prog = p.add_mutually_exclusive_group()
    prog.add_argument(
        "--progress", dest="progress", action="store_true", default=None, help="always show the progress bar"
    )
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    add_spec_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.leaderboard.render import render
    from ldpbench.leaderboard.theory import theory_warnings
    from ldpbench.runner import default_out_dir, run_spec

    if args.workers is not None and args.workers < 0:
        raise UsageError("--workers must be 0 (one per core) or more")
    if args.cell_timeout is not None:
        from ldpbench.spec.timeouts import cell_timeout_problem

        problem = cell_timeout_problem(args.cell_timeout)
        if problem:
            raise UsageError(problem.replace("'cell_timeout'", "--cell-timeout"))
    # Where the results go, resolved before any plugin code runs (validation builds plugins, and
    # one that calls os.chdir must not move the results folder).
    started_in = Path.cwd()
    out = Path(args.out).absolute() if args.out else None
    plugins, spec, _ = load_plugins_and_spec(args.spec, args)
    for failure in spec.plugin_failures:
        print(f"ldpbench: plugin failed while the spec was checked: {failure}", file=sys.stderr)
    executor = apply_executor_params(plugins, spec, args)
    outcome = run_spec(
        spec,
        plugins,
        out or started_in / default_out_dir(spec),
        workers=args.workers,
        executor=executor,
        progress=args.progress,
        rerun=args.rerun,
        cell_timeout=args.cell_timeout,
        recompute=args.recompute,
    )
    text = render(outcome.leaderboard, args.format, alpha=outcome.spec.alpha)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if outcome.cells_stale:
        print(f"ldpbench: {outcome.cells_stale} cells rerun: {'; '.join(outcome.stale_reasons)}", file=sys.stderr)
    if outcome.cells_incomplete:
        print(f"ldpbench: {outcome.cells_incomplete} stored cells rerun: {outcome.incomplete_reason}", file=sys.stderr)
    print(
        f"ldpbench: {outcome.cells_total} cells ({outcome.cells_run} run, {outcome.cells_skipped} already done) "
        f"in {outcome.seconds:.1f} s; results in {outcome.out_dir}",
        file=sys.stderr,
    )
    far = theory_warnings(outcome.leaderboard)
    if far:  # how a wrong oracle is noticed without a test (docs/statistics.md)
        _summarize(
            f"{len(far)} rows far from the oracle's theoretical error (check the oracle's variance or sampler)",
            far,
            10,
            "rows",
        )
    if outcome.noted_rows:
        _summarize(
            f"{outcome.noted_rows} result rows carry plugin warnings (column 'notes')", outcome.notes, 5, "warnings"
        )
    if outcome.failed_rows:
        _summarize(f"{outcome.failed_rows} result rows failed", outcome.errors, 10, "errors")
        print(f"ldpbench: where each was raised: ldpbench leaderboard {outcome.out_dir} --failures", file=sys.stderr)
        return int(ExitCode.PLUGIN)
    if spec.plugin_failures:
        # Plugin code failed while the spec was checked (its tags(), say) even if every cell
        # went well: a broken plugin is never a success.
        print(
            f"ldpbench: {len(spec.plugin_failures)} plugin failure(s) while the spec was checked (above)",
            file=sys.stderr,
        )
        return int(ExitCode.PLUGIN)
    return int(ExitCode.OK)


def apply_executor_params(plugins: Any, spec: Any, args: argparse.Namespace) -> str | None:
    """Put ``--executor-param`` (and ``--scheduler``) into the spec's executor entry.

    The command line is where parameters declared ``user_only`` (a scheduler address) come from;
    they are checked against the executor's declaration like a spec's. Returns the ``--executor``
    name still to hand to the runner (``None`` once the entry carries it).
    """
    given = list(args.executor_param)
    name = args.executor
    if args.scheduler:
        given.append(f"scheduler={args.scheduler}")
        name = name or "dask"
    if not given:
        return name
    name = name or (spec.executor.name if spec.executor is not None else None)
    if name is None:
        raise UsageError("--executor-param needs --executor NAME (or an executor in the spec)")
    params: dict[str, Any] = (
        dict(spec.executor.params) if spec.executor is not None and spec.executor.name == name else {}
    )
    for item in given:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--executor-param takes KEY=VALUE, got {item!r}")
        params[key.strip()] = _cli_value(text)
    info = plugins.get("executor", name)
    try:
        info.resolve_params(params)
    except ParamError as exc:
        raise UsageError(f"--executor-param: {exc}") from None
    spec.executor = Entry("executor", name, tuple(params.items()), info.version)
    return None


def _cli_value(text: str) -> Any:
    """A command-line value as YAML reads a scalar (``4`` is a number, ``true`` a bool), else text."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (str, int, float, bool)) else text


def _summarize(headline: str, messages: list[str], most: int, what: str) -> None:
    """``headline:`` then the first ``most`` distinct messages, indented, on stderr."""
    print(f"ldpbench: {headline}:", file=sys.stderr)
    for message in messages[:most]:
        print(f"  {message}", file=sys.stderr)
    if len(messages) > most:
        print(f"  ... and {len(messages) - most} more distinct {what}", file=sys.stderr)
