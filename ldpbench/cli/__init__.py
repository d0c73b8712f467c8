"""The ``ldpbench`` command: one small module per subcommand.

Each subcommand module defines ``register(subparsers)`` (adds its parser and sets
``func=run``) and ``run(args) -> int``. :func:`main` maps errors to exit codes: a
:class:`~ldpbench.errors.LdpbenchError` prints its message and no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence

from ldpbench.errors import ExitCode, LdpbenchError, SpecError
from ldpbench.util.version import VERSION

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS = (
    "run",
    "validate",
    "plugins",
    "describe",
    "check-plugin",
    "audit",
    "datasets",
    "compare",
    "leaderboard",
    "report",
    "rank",
    "new-plugin",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ldpbench",
        description="Benchmark frequency estimation under local differential privacy.",
    )
    parser.add_argument("--version", action="version", version=f"ldpbench {VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}_cmd")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return int(ExitCode.USAGE)
    try:
        with _results_warnings_as_lines():
            return int(args.func(args))
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return int(exc.exit_code)
    except LdpbenchError as exc:
        print(f"ldpbench: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("ldpbench: interrupted (finished cells are saved; run again to resume)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `ldpbench plugins --json | head`: the reader left; exit quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.OK)
    except Exception:  # noqa: BLE001 - a bug of ours must not exit 1, which means "regression"
        traceback.print_exc()
        print(
            "ldpbench: internal error (a bug in ldpbench, not in your input; please report it with the "
            "traceback above)",
            file=sys.stderr,
        )
        return int(ExitCode.INTERNAL)


@contextlib.contextmanager
def _results_warnings_as_lines() -> Iterator[None]:
    """Show what the results readers warn about (torn lines, cells of an earlier spec) as
    ``ldpbench: warning: ...`` lines, not as Python warnings with a source line."""
    from ldpbench.results.store import ResultsWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        if issubclass(category, ResultsWarning):
            print(f"ldpbench: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
