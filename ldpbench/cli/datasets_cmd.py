"""``ldpbench datasets``: every registered dataset with its users n, items d and source.

Each dataset is loaded with its default parameters. A dataset that needs a file you have not given
(``histogram``, ``fimi``, or ``kosarak`` without a copy in the cache) is listed with what it needs
instead of failing the command.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from ldpbench.cli._common import add_plugin_options
from ldpbench.errors import LdpbenchError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help="list datasets with n, d and source", description=__doc__)
    p.add_argument("names", nargs="*", metavar="NAME", help="only these datasets")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    add_plugin_options(p)
    p.set_defaults(func=run)


def describe_dataset(plugins: Any, info: Any) -> dict[str, Any]:
    """One row: name, n, d, source, status (``ok``, ``needs-input`` or ``unavailable``)."""
    row: dict[str, Any] = {
        "name": info.name,
        "n": None,
        "d": None,
        "source": "",
        "status": "ok",
        "partial": False,
        "synthetic": False,
        "distribution": info.origin.distribution,
        "summary": info.summary,
    }
    required = [p for p in info.params if p.required]
    if required:
        row["status"] = "needs-input"
        row["source"] = "needs " + ", ".join(f"'{p.name}' ({p.help or p.type_name()})" for p in required)
        return row
    try:
        dataset = plugins.create("dataset", info.name)
        population = dataset.load(np.random.default_rng(0))
    except LdpbenchError as exc:
        row["status"] = "unavailable"
        row["source"] = str(exc).splitlines()[0]
        return row
    except Exception as exc:  # noqa: BLE001 — a broken plugin must not break the listing
        row["status"] = "error"
        row["source"] = f"{type(exc).__name__}: {exc}"
        return row
    meta = dict(population.info)
    row.update(
        n=population.n,
        d=population.d,
        partial=bool(meta.get("partial", False)),
        synthetic=bool(meta.get("synthetic", False)),
    )
    source = str(meta.get("source") or info.summary)
    if row["partial"] and "partial" not in source.lower():
        source = "PARTIAL SAMPLE: " + source
    row["source"] = source
    return row


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ldpbench.cli._common import plugins_from_args

    plugins = plugins_from_args(args)
    registry = plugins.registry("dataset")
    infos = [registry.get(name) for name in args.names] if args.names else list(registry)
    rows = [describe_dataset(plugins, info) for info in infos]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = [
        [r["name"], "" if r["n"] is None else f"{r['n']:,}", "" if r["d"] is None else f"{r['d']:,}", r["source"]]
        for r in rows
    ]
    print(
        tabulate(
            table, headers=["name", "n", "d", "source"], tablefmt="simple", colalign=("left", "right", "right", "left")
        )
    )
    return 0
