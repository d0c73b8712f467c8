"""``ldpbench plugins``: list every installed plugin with its kind, version and origin.

An installed plugin that fails to load is listed too, with its error, instead of making the
command fail: that is where a user looks first when a spec says a plugin is unknown.
"""

from __future__ import annotations

import argparse
import json

from ldpbench.cli._common import add_plugin_options, plugins_from_args
from ldpbench.types import KINDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed plugins", description=__doc__)
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--kind", choices=list(KINDS), help="only plugins of this kind")
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    plugins = plugins_from_args(args, warn=False)  # listed below, not warned about
    infos = [i for i in plugins.all() if not args.kind or i.kind == args.kind]
    broken = [] if args.kind else list(plugins.broken)
    if args.json:
        rows = [{k: v for k, v in i.describe().items() if k != "params"} for i in infos]
        rows += [
            {
                "name": b.name,
                "kind": None,
                "distribution": b.distribution,
                "version": b.version,
                "module": b.value,
                "source": "entry-point",
                "error": b.error,
            }
            for b in broken
        ]
        print(json.dumps(rows, indent=2))
        return 0
    table = [[i.name, i.kind, i.origin.distribution, i.origin.version, i.cls.__module__, i.summary] for i in infos]
    table += [[b.name, "BROKEN", b.distribution, b.version, b.value, f"failed to load: {b.error}"] for b in broken]
    print(tabulate(table, headers=["name", "kind", "distribution", "version", "module", "summary"], tablefmt="simple"))
    return 0
