"""``ldpbench describe NAME``: a plugin's documentation and declared parameters."""

from __future__ import annotations

import argparse
import inspect
import json
import re

from ldpbench.cli._common import add_plugin_options
from ldpbench.errors import UnknownPluginError
from ldpbench.types import KINDS
from ldpbench.util.suggest import closest


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("describe", help="show a plugin's parameters and documentation", description=__doc__)
    p.add_argument("name", help="plugin name, e.g. norm-sub")
    p.add_argument("--kind", choices=list(KINDS), help="disambiguate when two kinds share a name")
    p.add_argument("--json", action="store_true")
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ldpbench.cli._common import plugins_from_args

    plugins = plugins_from_args(args)
    matches = [i for i in plugins.all() if i.name == args.name and (not args.kind or i.kind == args.kind)]
    if not matches:
        names = sorted({i.name for i in plugins.all()})
        raise UnknownPluginError(args.kind or "plugin", args.name, closest(args.name, names), names)
    if args.json:
        print(json.dumps([m.describe() for m in matches], indent=2))
        return 0
    for info in matches:
        print(f"{info.name} ({info.kind}) — {info.origin}; algorithm_version {str(info.cls.algorithm_version)!r}")
        doc = plain_text(inspect.getdoc(info.cls) or "")
        if doc:
            print()
            print(doc)
        print()
        if info.params:
            rows = [
                [p.name, p.type_name(), "(required)" if p.required else repr(p.default), plain_text(p.help)]
                for p in info.params
            ]
            print(tabulate(rows, headers=["parameter", "type", "default", "description"]))
        else:
            print("no parameters")
        print()
    return 0


_ROLE = re.compile(r":(?:py:)?(\w+):`([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.S)


def _role(match: re.Match[str]) -> str:
    role, target = match.group(1), match.group(2).strip()
    if "<" in target and target.endswith(">"):  # :func:`text <target>`: the text
        return f"`{target.split('<', 1)[0].strip()}`"
    short = target.startswith("~")
    parts = [p for p in target.lstrip("~").lstrip(".").split(".") if p]
    private = any(p.startswith("_") for p in parts[:-1]) or target.lstrip("~").startswith(".")
    if role == "mod" and (private or any(p.startswith("_") for p in parts)):
        return "an internal module"  # a private module's name means nothing to a reader of the help
    return f"`{parts[-1] if (short or private) and parts else '.'.join(parts)}`"


def plain_text(doc: str) -> str:
    """A docstring as a terminal shows it: Sphinx roles (``:mod:`x```, ``:class:`~a.B```) become
    the name in single backticks, a private module's name becomes "an internal module", and
    double-backtick literals become single-backtick ones (issue 29: ``describe`` printed raw
    markup and private module names)."""
    return _LITERAL.sub(lambda m: f"`{m.group(1)}`", _ROLE.sub(_role, doc))
