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

import atexit
import contextlib
import contextvars
import ctypes
import os
import select
import signal
import sys
import threading
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
    process, before any result is written, ends the process: a watchdog process (one per
    process, :class:`_Watchdog`) is told the limit, and when it passes before the body is done
    it writes the line and sends SIGQUIT, whose handler for the duration is the C library's
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
    previous = exit_on_quit()
    try:
        token = _WATCHDOG.arm(limit, line)
    except OSError:  # no process or pipe to spare: run without the backstop, as off Linux
        _restore_sigquit(previous)
        yield
        return
    try:
        yield
    finally:
        # Disarming waits for the watchdog's answer: a SIGQUIT it sent before reading the
        # disarm has then been delivered, while the handler is still ``_exit``.
        with contextlib.suppress(OSError):
            _WATCHDOG.disarm(token)
        _restore_sigquit(previous)


class _Watchdog:
    """One watchdog process per process, forked on first use: ``arm(seconds, line)`` starts a
    deadline, ``disarm(token)`` ends it (and returns once the watchdog has read it); a deadline
    that passes armed gets ``line`` written to stderr and SIGQUIT sent to the process.

    It replaces a fork per contained call (a fork of a large interpreter costs milliseconds of
    page tables in both processes: 0.2 s of CPU per small run with a time limit, measured).
    A process forked from this one (a pool worker) gets its own watchdog: ``pid`` says whose
    this one is. The watchdog ends when this process closes its end of the pipe (``atexit``)
    or is gone."""

    def __init__(self) -> None:
        self.owner: int | None = None
        self.child = 0
        self.commands = -1
        self.answers = -1
        self.tokens = 0
        self.lock = threading.Lock()

    def _start(self) -> None:
        commands_r, commands_w = os.pipe()
        answers_r, answers_w = os.pipe()
        owner = os.getpid()
        child = os.fork()
        if child == 0:  # the watchdog
            try:
                os.close(commands_w)
                os.close(answers_r)
                _watch(commands_r, answers_w, owner)
            finally:
                _REAL_EXIT(0)
        os.close(commands_r)
        os.close(answers_w)
        self.owner, self.child, self.commands, self.answers = owner, child, commands_w, answers_r
        atexit.register(self.stop)

    def stop(self) -> None:
        """End the watchdog and close the pipe (at exit, or when the pipe is out of step)."""
        if self.owner != os.getpid():
            return
        with contextlib.suppress(OSError):
            os.kill(self.child, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.child, 0)
        self._forget()

    def after_fork(self) -> None:
        """In a forked child: a lock another thread held stays held there, so a new one."""
        self.lock = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        """Close this process's ends of the pipes; the next arm starts a new watchdog. Also run
        in a forked child, whose copies of the pipes belong to its parent's watchdog."""
        if self.owner is None:
            return
        for fd in (self.commands, self.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.owner, self.child, self.commands, self.answers = None, 0, -1, -1

    def arm(self, seconds: float, line: bytes) -> int:
        with self.lock:
            if self.owner is None:
                self._start()
            self.tokens += 1
            token = self.tokens
            line = line.rstrip(b"\n").replace(b"\n", b" ")
            _send(self.commands, b"A %d %r %s\n" % (token, seconds, line))
            return token

    def disarm(self, token: int) -> None:
        with self.lock:
            if self.owner != os.getpid():
                return
            try:
                _send(self.commands, b"D %d\n" % token)
                os.read(self.answers, 1)
            except BaseException:
                # Interrupted between the question and its answer: the pipe may be out of step,
                # so this watchdog is let go (it ends on the closed pipe) and the next call starts one.
                self.stop()
                raise


def _send(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _watch(commands: int, answers: int, owner: int) -> None:
    """The watchdog's loop: deadlines by token; fire the earliest that passes while armed."""
    armed: dict[int, tuple[float, bytes]] = {}
    pending = b""
    while True:
        now = time.monotonic()
        due = min((deadline for deadline, _ in armed.values()), default=None)
        if due is not None and due <= now:
            token = min(armed, key=lambda t: armed[t][0])
            if os.getppid() == owner:
                os.write(2, armed[token][1] + b"\n")
                os.kill(owner, signal.SIGQUIT)
            return
        # Idle: look every second whether the owner is gone (a pool worker may hold our pipe).
        wait = 1.0 if due is None else min(1.0, due - now)
        ready, _, _ = select.select([commands], [], [], wait)
        if not ready:
            if os.getppid() != owner:
                return
            continue
        chunk = os.read(commands, 65536)
        if not chunk:  # the owner closed the pipe or exited
            return
        pending += chunk
        while b"\n" in pending:
            message, pending = pending.split(b"\n", 1)
            kind, token, rest = (message.split(b" ", 2) + [b""])[:3]
            if kind == b"A":
                seconds, line = (rest.split(b" ", 1) + [b""])[:2]
                armed[int(token)] = (time.monotonic() + float(seconds), line)
            else:
                armed.pop(int(token), None)
                os.write(answers, b"k")


_WATCHDOG = _Watchdog()
if sys.platform != "win32":  # no fork there (nor a backstop: _exit_on_sigquit is Linux-only)
    os.register_at_fork(after_in_child=_WATCHDOG.after_fork)


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
