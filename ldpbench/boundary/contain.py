"""Plugin code that runs outside a cell (while a spec is checked) is contained as a cell's is.

Validating a spec runs plugin code: every post-processor and metric is built from its
parameters, every oracle is built and asked for its ``tags()``, every dataset is loaded. That
code may raise anything (``SystemExit(0)``, ``KeyboardInterrupt``, a ``BaseException`` subclass,
an exception whose ``__str__`` raises), call ``os._exit``, sleep, or spin in compiled code.
:func:`contained_call` runs it under the guards of a cell (:func:`~ldpbench.boundary.guard.cell_guard`:
the cell time limit, ``os._exit`` turned into an exception, the user's Ctrl-C told apart) and
the same process backstop as the process pool (:func:`backstop`: past the limit plus a grace
period the process stops with exit 3 and one line, since compiled code never returns to the
timer). Whatever the plugin did becomes a :class:`PluginCodeFailed`, naming the plugin, what
was being done and where in its code it raised; only the user's real Ctrl-C goes through.

While a spec is checked (:func:`collecting_failures`) every failure is recorded once: a plugin
that failed is not run again for the same purpose (a sleeping constructor costs its limit once),
and the spec carries the failures (``Spec.plugin_failures``): ``ldpbench validate`` exits 3
listing them, ``ldpbench run`` warns and runs, where the cells of that plugin fail.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from ldpbench.boundary.failures import error_text, plugin_location
from ldpbench.boundary.guard import CellTimeout, cell_guard, is_real_interrupt
from ldpbench.errors import ExitCode, ParamError, PluginError

T = TypeVar("T")

#: ``os._exit`` as the interpreter gave it (``posix._exit``, which nothing replaces): the backstop
#: must really stop the process even while a guard has replaced ``os._exit``.
try:
    from posix import _exit as _REAL_EXIT
except ImportError:  # pragma: no cover - not POSIX
    _REAL_EXIT = os._exit


def hard_limit(seconds: float) -> float:
    """Seconds after which the backstop stops the process: the limit plus the grace period in
    which the time limit should have stopped the plugin (the process pool's, too)."""
    return float(seconds) + 2.0 + 0.25 * float(seconds)


class PluginCodeFailed(PluginError):
    """Plugin code raised, exited or ran out of time outside a cell (exit 3)."""

    def __init__(self, who: str, doing: str, exc: BaseException):
        self.who, self.doing = who, doing
        if isinstance(exc, CellTimeout):
            text = f"{who} did not finish within {exc.seconds:g} s ({doing}; the cell time limit)"
        else:
            text = error_text(f"{who} failed ({doing})", exc)
        where = plugin_location(exc)
        super().__init__(text + (f", at {where}" if where else ""))


@dataclass
class _Collector:
    seconds: float | None
    failures: dict[tuple[str, str], PluginCodeFailed] = field(default_factory=dict)


_collector: contextvars.ContextVar[_Collector | None] = contextvars.ContextVar("ldpbench_collector", default=None)


@contextlib.contextmanager
def collecting_failures(seconds: float | None) -> Iterator[dict[tuple[str, str], PluginCodeFailed]]:
    """While checking a spec: plugin code gets ``seconds`` (the cell time limit, None for none),
    and each failure is recorded in the dict yielded, keyed by ``(who, doing)``."""
    collector = _Collector(seconds)
    token = _collector.set(collector)
    try:
        yield collector.failures
    finally:
        _collector.reset(token)


def contained_call(
    who: str,
    doing: str,
    fn: Callable[[], T],
    *,
    seconds: float | None = None,
    passthrough: tuple[type[BaseException], ...] = (ParamError,),
    hard: bool = True,
) -> T:
    """``fn()`` (plugin code) under a cell's guards and the process backstop.

    :param who: the plugin, as messages name it (``postprocessor 'shrink'``).
    :param doing: what it was doing (``its constructor``, ``tags()``, ``loading``).
    :param seconds: the time limit; by default the one of :func:`collecting_failures`, if any.
    :param passthrough: exceptions the caller handles itself (a refused parameter is a problem
        of the spec, at its line), raised unchanged.
    :raises PluginCodeFailed: for anything else the plugin raised, or its exit or time-out;
        the user's real Ctrl-C goes through as ``KeyboardInterrupt``.
    :param hard: whether the process backstop applies (off for a limit of ldpbench's own
        choosing rather than the user's: a slow load in compiled code is then left to run).
    """
    collector = _collector.get()
    if seconds is None and collector is not None:
        seconds = collector.seconds
    if collector is not None and (who, doing) in collector.failures:
        raise collector.failures[(who, doing)]
    try:
        with backstop(who, doing, seconds if hard else None), cell_guard(seconds):
            return fn()
    except BaseException as exc:  # noqa: BLE001 - whatever plugin code raises is the plugin's
        if is_real_interrupt(exc) or (isinstance(exc, passthrough) and not isinstance(exc, PluginCodeFailed)):
            raise
        failure = PluginCodeFailed(who, doing, exc)
        if collector is not None:
            collector.failures[(who, doing)] = failure
        raise failure from None


@contextlib.contextmanager
def backstop(who: str, doing: str, seconds: float | None) -> Iterator[None]:
    """Stop the process (exit 3, one line) if the body runs past :func:`hard_limit` of ``seconds``.

    The time limit raises only when the interpreter runs: a plugin stuck in compiled code
    (``sum(range(10**12))``) never sees it, and holds the GIL, so no Python thread can watch it
    either. A cell on the process pool is then killed with its worker; code that runs in this
    process, before any result is written, ends the process: a forked watchdog sleeps out the
    limit, writes the line and sends SIGQUIT, whose handler for the duration is the C library's
    ``_exit`` itself (no interpreter needed: it exits with the signal's number, 3, which is
    :attr:`~ldpbench.errors.ExitCode.PLUGIN`).
    """
    exit_on_quit = _exit_on_sigquit() if seconds else None  # Linux only: fork and SIGQUIT == 3
    if exit_on_quit is None:
        yield
        return
    limit = hard_limit(seconds or 0)
    line = (
        f"ldpbench: error: {who} is still running {limit:g} s after it started ({doing}), past the "
        f"{seconds:g} s time limit, stuck where the limit cannot interrupt it (compiled code); stopped\n"
    ).encode()
    parent = os.getpid()
    previous = exit_on_quit()
    watchdog = os.fork()
    if watchdog == 0:  # the watchdog: sleep, then stop the parent if it is still ours
        try:
            time.sleep(limit)
            if os.getppid() == parent:
                os.write(2, line)
                os.kill(parent, signal.SIGQUIT)
        finally:
            _REAL_EXIT(0)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.kill(watchdog, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(watchdog, 0)
        _restore_sigquit(previous)


_libc = None


def _exit_on_sigquit() -> Callable[[], int] | None:
    """A function that makes SIGQUIT call the C library's ``_exit`` (returning the old handler),
    or None where that cannot be done (not Linux, no libc, SIGQUIT is not 3)."""
    global _libc
    if not sys.platform.startswith("linux") or int(signal.SIGQUIT) != int(ExitCode.PLUGIN):
        return None
    try:
        if _libc is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.signal.restype = ctypes.c_void_p
            libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
            _libc = libc
        handler = ctypes.cast(_libc._exit, ctypes.c_void_p)
    except (OSError, AttributeError):
        return None
    return lambda: _libc.signal(int(signal.SIGQUIT), handler)


def _restore_sigquit(previous: int | None) -> None:
    if _libc is not None:
        _libc.signal(int(signal.SIGQUIT), previous)
