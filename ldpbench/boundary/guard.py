"""Keep whatever a plugin does inside its cell: a time limit, exits and raised interrupts.

While a cell runs, :func:`cell_guard` (in the thread that runs it, if that is the main thread):

- arms a timer (``signal.setitimer``) that raises :class:`CellTimeout` when the cell has run for
  longer than its ``cell_timeout``, and again every second after that, so that a plugin that
  swallows the first one with ``except BaseException`` does not escape it;
- replaces ``os._exit`` by a function that raises :class:`PluginExit` in this process (a plugin
  calling it on the in-process executor would otherwise end the whole run, exit 0, with no
  leaderboard); a child process the plugin forks keeps the real one;
- takes over SIGINT, recording that the user really pressed Ctrl-C before raising
  ``KeyboardInterrupt`` as Python does; :func:`is_real_interrupt` tells that apart from a
  ``KeyboardInterrupt`` a plugin raised itself, which fails only its cell.

What the timer cannot interrupt: compiled code that does not return to the interpreter (a long
NumPy call, a C extension stuck in a loop) until it returns, and code running outside the main
thread (a Dask worker runs tasks in threads: no guard there), nor on a platform without
``setitimer`` (Windows). The process pool backs it with a hard limit (it kills the worker; see
``ldpbench_plugins.executors.local``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

#: After the first timeout, raise again this often while the plugin keeps running (seconds).
RETRY_SECONDS = 1.0


class CellTimeout(BaseException):
    """The cell ran longer than its ``cell_timeout`` (a BaseException: a plugin's ``except
    Exception`` must not swallow it)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"cell timed out after {seconds:g} s (cell_timeout)")


class PluginExit(BaseException):
    """A plugin called ``os._exit`` while its cell was running."""

    def __init__(self, status: Any):
        self.status = status
        super().__init__(f"plugin called os._exit({status!r})")


class _State:
    """What the guard of the running cell has recorded (one cell at a time per process)."""

    real_interrupt = False
    armed = False
    #: a process-pool worker: a SIGINT here is never the user's Ctrl-C for the run (the run's own
    #: process gets that one), so it fails the cell in flight like any plugin fault
    worker = False


_state = _State()
#: POSIX only: without ``setitimer`` (Windows) cells run unguarded.
_HAS_TIMER = hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")


def is_real_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a SIGINT delivered to this process (the user's Ctrl-C) rather
    than from a plugin raising ``KeyboardInterrupt``."""
    return isinstance(exc, KeyboardInterrupt) and _state.real_interrupt


def contained(exc: BaseException) -> bool:
    """Whether a plugin's exception fails only what depends on it (everything a plugin can raise:
    ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, any ``BaseException``), or ends the
    cell (its time limit) or the run (the user's real Ctrl-C)."""
    return not (isinstance(exc, CellTimeout) or is_real_interrupt(exc))


def _on_sigint(signum: int, frame: Any) -> None:
    if not _state.worker:
        _state.real_interrupt = True
    raise KeyboardInterrupt


def mark_worker_process() -> None:
    """Call in a pool worker as it starts: a SIGINT that reaches it (a plugin that signals its own
    process, a stray ``kill -INT``) fails the cell it is running, or is ignored between cells; it
    never stops the run. A real Ctrl-C still does: it reaches the run's own process too."""
    _state.worker = True
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _on_alarm_factory(seconds: float):
    def _on_alarm(signum: int, frame: Any) -> None:
        if _state.armed:
            raise CellTimeout(seconds)

    return _on_alarm


@contextlib.contextmanager
def cell_guard(timeout: float | None) -> Iterator[None]:
    """Run the body under the guards above; a no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread() or not _HAS_TIMER:
        yield
        return
    pid = os.getpid()
    real_exit = os._exit

    def guarded_exit(status: Any = 0) -> None:
        if os.getpid() != pid:  # a child the plugin forked: let it end as it asks
            real_exit(status)
        raise PluginExit(status)

    _state.real_interrupt = False
    old_int = signal.signal(signal.SIGINT, _on_sigint)
    old_alarm = None
    if timeout:
        old_alarm = signal.signal(signal.SIGALRM, _on_alarm_factory(timeout))
        _state.armed = True
        signal.setitimer(signal.ITIMER_REAL, timeout, RETRY_SECONDS)
    os._exit = guarded_exit
    try:
        yield
    finally:
        _state.armed = False  # first: an alarm from here on is ignored
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_alarm)
        os._exit = real_exit
        signal.signal(signal.SIGINT, old_int)
