"""``ldpbench plugins``: list every installed plugin with its kind, version and origin."""

from __future__ import annotations

import argparse
import json

from ..types import KINDS
from ._common import add_plugin_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed plugins", description=__doc__)
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--kind", choices=list(KINDS), help="only plugins of this kind")
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ..pluginmanager import build_plugins

    plugins = build_plugins(args.plugins_dir)
    infos = [i for i in plugins.all() if not args.kind or i.kind == args.kind]
    if args.json:
        rows = [
            {k: v for k, v in i.describe().items() if k != "params"} for i in infos
        ]
        print(json.dumps(rows, indent=2))
        return 0
    table = [[i.name, i.kind, i.origin.distribution, i.origin.version, i.cls.__module__, i.summary] for i in infos]
    print(tabulate(table, headers=["name", "kind", "distribution", "version", "module", "summary"], tablefmt="simple"))
    return 0
