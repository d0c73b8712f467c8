"""``ldpbench validate SPEC...``: check specs without running them (exit 0, or 2 with FILE:LINE messages, or 3
when plugin code failed while a spec was checked)."""

from __future__ import annotations

import argparse
import sys

from ldpbench.cli._common import add_spec_plugin_options, load_plugins_and_spec
from ldpbench.errors import ExitCode, SpecError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check specs without running them", description=__doc__)
    p.add_argument("specs", nargs="+", metavar="SPEC")
    add_spec_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.spec.expand import count_cells

    status = ExitCode.OK
    for path in args.specs:
        try:
            _, spec, _ = load_plugins_and_spec(path, args)
        except SpecError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            status = ExitCode.USAGE
            continue
        if spec.plugin_failures:
            # The spec is well formed, but plugin code failed while it was checked: a run would
            # fail those cells, so this is no "ok" (and never exit 0).
            for failure in spec.plugin_failures:
                print(f"{path}: plugin failed while the spec was checked: {failure}", file=sys.stderr)
            status = max(status, ExitCode.PLUGIN)
            continue
        n_rows = count_cells(spec) * len(spec.pipelines) * len(spec.metrics)
        print(f"{path}: ok — {count_cells(spec)} cells, {n_rows} result rows")
    return int(status)
