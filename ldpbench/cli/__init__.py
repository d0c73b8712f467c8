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
import threading
import traceback
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

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
        with _results_warnings_as_lines(), exits_of_plugin_threads_contained() as thread_exits:
            code = int(args.func(args))
        if thread_exits and code == ExitCode.OK:
            # The process went on, but a plugin tried to end it: a plugin failure, never success.
            print(f"ldpbench: error: plugin code tried to end the run: {thread_exits[0]}", file=sys.stderr)
            return int(ExitCode.PLUGIN)
        return code
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
    except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit, a plugin's own class
        # ldpbench raises none of these itself: plugin code raised it where no guard contains it.
        # Exit 1 would read as a regression and exit 0 as success: it is a plugin failure.
        from ldpbench.boundary.failures import error_text, plugin_location

        where = plugin_location(exc)
        print(
            f"ldpbench: error: {error_text('plugin code', exc)}" + (f", at {where}" if where else ""), file=sys.stderr
        )
        return int(ExitCode.PLUGIN)


@contextlib.contextmanager
def exits_of_plugin_threads_contained() -> Iterator[list[str]]:
    """While a command runs, ``os._exit`` called by a thread of this process (a plugin's own
    thread: the guards of :mod:`ldpbench.boundary.guard` cover the main thread only) ends that
    thread, not the process; it is reported in one line instead of a traceback, and recorded in
    the list yielded (the command then exits 3, not 0). A forked child keeps the real
    ``os._exit`` (process-pool workers end with it)."""
    from ldpbench.boundary.failures import plugin_location
    from ldpbench.boundary.guard import PluginExit

    pid = os.getpid()
    real_exit = os._exit
    real_hook = threading.excepthook
    exits: list[str] = []

    def exit_of_thread(status: Any = 0) -> None:
        if os.getpid() != pid or threading.current_thread() is threading.main_thread():
            real_exit(status)
        raise PluginExit(status)

    def hook(args: threading.ExceptHookArgs) -> None:
        if not isinstance(args.exc_value, PluginExit):
            real_hook(args)
            return
        name = args.thread.name if args.thread else "?"
        where = plugin_location(args.exc_value)
        exits.append(
            f"thread '{name}' called os._exit({args.exc_value.status!r})"
            + (f" at {where}" if where else "")
            + "; only that thread ended"
        )
        print(f"ldpbench: warning: {exits[-1]}", file=sys.stderr)

    os._exit = exit_of_thread
    threading.excepthook = hook
    try:
        yield exits
    finally:
        os._exit = real_exit
        threading.excepthook = real_hook


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
