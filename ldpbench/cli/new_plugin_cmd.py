"""``ldpbench new-plugin NAME --kind KIND [DIR]``: write a ready plugin repository."""

from __future__ import annotations

import argparse
import sys

from ldpbench.errors import ExitCode


class _IntermixedParser(argparse.ArgumentParser):
    """Takes NAME, the options and DIR in any order (``new-plugin NAME --kind oracle DIR``):
    a plain parser assigns positionals only up to the first option."""

    _mixing = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if self._mixing:  # parse_known_intermixed_args calls back into parse_known_args
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def register(subparsers: argparse._SubParsersAction) -> None:
    from ldpbench.types.kinds import SCAFFOLDED_KINDS

    # argparse builds every subparser with one class; this one needs the intermixed parser.
    default_class, subparsers._parser_class = subparsers._parser_class, _IntermixedParser
    try:
        parser = _add_parser(subparsers, SCAFFOLDED_KINDS)
    finally:
        subparsers._parser_class = default_class
    parser.set_defaults(func=run)


def _add_parser(subparsers: argparse._SubParsersAction, kinds: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "new-plugin",
        help="write a ready plugin repository (example plugin, kit tests, CI spec, baseline, workflow)",
        description="Write DIR (default ./ldpbench-NAME): pyproject.toml with the entry point and a pinned "
        "ldpbench, a small working example plugin of KIND, tests that run the conformance kit (and the "
        "privacy audit of an oracle), a CI spec with its baseline and the pytest gate, and a GitHub "
        "Actions workflow. Its tests pass as generated.",
    )
    parser.add_argument("name", metavar="NAME", help="plugin name: lowercase words joined by hyphens")
    parser.add_argument("dir", metavar="DIR", nargs="?", help="where to write it (default: ./ldpbench-NAME)")
    parser.add_argument("--kind", required=True, choices=sorted(kinds), help="the kind of plugin")
    from ldpbench.types.kinds import KINDS as PLUGIN_KINDS

    variants = sorted({v for k in kinds for v, _ in PLUGIN_KINDS[k].variants})
    parser.add_argument(
        "--variant",
        choices=variants,
        help="another example of the kind: "
        + "; ".join(f"{v} (--kind {k})" for k in kinds for v, _ in PLUGIN_KINDS[k].variants),
    )
    parser.add_argument(
        "--ldpbench-source",
        metavar="REQUIREMENT",
        help="pip requirement that installs ldpbench in the plugin's CI (default: the source this "
        "ldpbench was installed from, as pip recorded it: a git URL at its commit, a folder, a wheel)",
    )
    parser.add_argument(
        "--no-baseline", action="store_true", help="do not run the CI spec now (then create the baseline yourself)"
    )
    parser.add_argument(
        "--no-git",
        action="store_true",
        help="do not make DIR a git repository (by default: git init, the files committed, the baseline "
        "computed at that commit and committed on top; skipped inside an existing work tree)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from ldpbench.scaffold import new_plugin

    name = args.name
    written = new_plugin(
        name,
        args.kind,
        args.dir,
        ldpbench_source=args.ldpbench_source or None,
        baseline=not args.no_baseline,
        init_git=not args.no_git,
        variant=args.variant,
    )
    root = written.root
    print(f"ldpbench: wrote the {args.kind} plugin {name!r} to {root}", file=sys.stderr)
    if written.unversioned:
        print(f"ldpbench: not a git repository of its own: {written.unversioned}", file=sys.stderr)
    else:
        what = "the files are" if args.no_baseline else "the files and the baseline are"
        print(f"ldpbench: a git repository (branch main): {what} committed", file=sys.stderr)
    print(f"next: cd {root} && pip install -e '.[test]' && pytest", file=sys.stderr)
    return int(ExitCode.OK)
