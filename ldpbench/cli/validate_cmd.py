"""``ldpbench validate SPEC...``: check specs without running them (exit 0, or 2 with FILE:LINE messages, or 3
when plugin code failed while a spec was checked)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ldpbench.cli._common import add_spec_plugin_options, load_plugins_and_spec
from ldpbench.errors import ExitCode, SpecError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check specs without running them", description=__doc__)
    p.add_argument("specs", nargs="+", metavar="SPEC")
    add_spec_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
        print(f"{path}: ok — {_size(spec)}")
    return int(status)


def _size(spec: Any) -> str:
    """How many cells and rows a run makes. An oracle's cell gives one row per (pipeline, metric);
    a protocol's gives that many per output (per round, attribute or result), which only its
    run knows: its rows are then counted per output, and said so."""
    from ldpbench.spec.expand import count_cells

    cells = count_cells(spec)
    rows = cells * len(spec.pipelines) * len(spec.metrics)
    if any(m.kind == "protocol" for m in spec.mechanisms):
        return f"{cells} cells, {rows} result rows per output (a protocol's cell has rows for each of its outputs)"
    return f"{cells} cells, {rows} result rows"
