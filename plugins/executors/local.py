"""Executors on this machine: in the calling process, or on a local process pool (the default).

Results do not depend on the executor: every cell draws from a random stream keyed by the spec
seed and the cell's identity, never by the order in which cells run.

A pool worker that dies (a plugin calling ``os._exit``, a segfault in compiled code, the kernel's
OOM killer) breaks a :class:`~concurrent.futures.ProcessPoolExecutor` and fails every task in
flight, most of which did nothing wrong. The process pool therefore reruns the tasks that were in
flight, each in a process of its own, to tell the culprit from the bystanders: the culprit comes
back as a :class:`~ldpbench.types.TaskLost` (the runner stores it as a failed cell, exit 3), the
others with their normal results, and a fresh pool goes on with the remaining tasks. Since every
cell's numbers depend only on the cell, rerunning one changes nothing in its results.

A task with a time limit (``task.timeout``, the cell's ``cell_timeout``) is first stopped inside
its worker (ldpbench.boundary.guard raises in the plugin's Python code). A plugin stuck where that
cannot reach (compiled code, a swallowed signal) is stopped here: past the limit plus a grace
period, the pool's workers are killed, the tasks in flight rerun each in a process of its own as
for a death, and the one still over its limit there is killed and comes back as a ``TaskLost``
saying it timed out.
"""

from __future__ import annotations

import collections
import ctypes
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_connections
from typing import Any

from ldpbench import hookimpl
from ldpbench.boundary.guard import mark_worker_process
from ldpbench.params import Param
from ldpbench.types import Executor, ExecutorTags, TaskLost

#: At most this many local workers (a typo must not fork a process per cell).
MAX_WORKERS = 512
#: Tasks in flight per worker: enough to keep workers busy, few enough that a huge grid is not
#: pickled up front (and that few tasks need a rerun when a worker dies).
IN_FLIGHT_PER_WORKER = 4
#: How often the pool looks for tasks over their time limit (seconds).
POLL_SECONDS = 0.25


def hard_limit(task: Any) -> float | None:
    """Seconds after which ``task``'s process is killed: its ``timeout`` plus a grace period in
    which the in-process guard should have stopped it, or None without a limit."""
    timeout = getattr(task, "timeout", None)  # a CellTask's cell_timeout; other tasks have none
    if not timeout:
        return None
    return float(timeout) + 2.0 + 0.25 * float(timeout)


#: ``prctl`` option that sends the calling process a signal when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Pool initializer: make this worker die with ``parent_pid`` (Linux; a no-op elsewhere), and
    let a SIGINT that reaches it fail its cell rather than stop the run
    (:func:`~ldpbench.boundary.guard.mark_worker_process`).

    Without it, a SIGKILLed ``ldpbench run`` leaves its workers computing cells nobody will store.
    The kernel sends the signal when the parent *thread* that forked the worker exits; pool
    workers are forked by the thread that submits the first task, which is the one running the
    spec and living as long as the pool.
    """
    mark_worker_process()  # a SIGINT that reaches only this worker fails its cell, not the run
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):  # no libc or no prctl: workers just outlive a killed parent
        return
    if os.getppid() != parent_pid:
        # The parent died between fork and prctl: no signal will ever come.
        os._exit(1)


def describe_exit(exitcode: int | None) -> str:
    """``exit code 7`` or ``killed by signal 11 (SIGSEGV)`` for a process's ``exitcode``."""
    if exitcode is None:
        return "exit status unknown"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            return f"killed by signal {-exitcode}"
        return f"killed by signal {-exitcode} ({name})"
    return f"exit code {exitcode}"


def _call_isolated(conn: Connection, parent_pid: int, fn: Callable[[Any], Any], task: Any) -> None:
    """Body of an isolated process: run ``fn(task)`` and send back ``(ok, result or exception)``.

    Only an ``Exception`` travels back (a bug, re-raised as a pool would); anything else ends this
    process, and the parent reports its exit code.
    """
    die_with_parent(parent_pid)
    try:
        message = (True, fn(task))
    except Exception as exc:  # noqa: BLE001 - re-raised in the parent, as a pool would
        message = (False, exc)
    conn.send(message)
    conn.close()


class InProcess(Executor):
    """Run cells one after another in this process (debugging, profiling, tiny specs)."""

    name = "in-process"

    @classmethod
    def tags(cls) -> ExecutorTags:
        return ExecutorTags(default_for="serial")  # what --workers 1 means

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        for task in tasks:
            yield fn(task)


class ProcessPool(Executor):
    """Run cells on a pool of local worker processes (default: one per core)."""

    name = "process-pool"
    params = (Param("workers", int, 0, "number of worker processes (0 = one per core)", min=0, max=MAX_WORKERS),)

    @classmethod
    def tags(cls) -> ExecutorTags:
        # a run's executor unless one is named; a repeat's cells go to one worker (CellBundle)
        return ExecutorTags(default_for="parallel", bundles=True)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._pool: ProcessPoolExecutor | None = None

    @staticmethod
    def _context() -> Any:
        # "spawn" would re-import NumPy in every worker for nothing; "fork" is safe here because
        # workers touch no threads of the parent. Spawn where fork is unavailable.
        methods = multiprocessing.get_all_start_methods()
        return multiprocessing.get_context("fork" if "fork" in methods else "spawn")

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, or a ``TaskLost`` for a task whose process died."""
        workers = self.workers or os.cpu_count() or 1
        ctx = self._context()
        source = iter(tasks)
        # Tasks taken from ``source`` but never started (a submit refused by a pool that broke).
        backlog: collections.deque[Any] = collections.deque()
        end = object()

        def take() -> Any:
            return backlog.popleft() if backlog else next(source, end)

        while True:
            task = take()
            if task is end:
                return
            self._pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=ctx, initializer=die_with_parent, initargs=(os.getpid(),)
            )
            pending: dict[Future[Any], Any] = {}
            suspects: list[Any] = []  # in flight when the pool broke: one of them killed it
            broken = False
            while task is not end and not broken:
                broken = not self._submit(pending, fn, task, backlog)
                if len(pending) >= IN_FLIGHT_PER_WORKER * workers:
                    break
                task = take()
            started: dict[Future[Any], float] = {}
            while pending:
                limited = any(hard_limit(t) for t in pending.values())
                done, _ = wait(pending, timeout=POLL_SECONDS if limited else None, return_when=FIRST_COMPLETED)
                if limited and not broken:
                    self._kill_if_over_limit(pending, started)
                for fut in done:
                    task = pending.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        suspects.append(task)
                        continue
                    yield result
                    if not broken:
                        nxt = take()
                        if nxt is not end:
                            broken = not self._submit(pending, fn, nxt, backlog)
            self._close_pool()
            if suspects:
                yield from self._run_isolated(fn, suspects, workers, ctx)

    def _kill_if_over_limit(self, pending: dict[Future[Any], Any], started: dict[Future[Any], float]) -> None:
        """Kill the pool's workers if a running task is past its hard limit (the pool then breaks
        and its tasks in flight rerun in isolation, where the culprit is told apart)."""
        now = time.monotonic()
        for fut, task in pending.items():
            if not fut.running():
                continue
            # "running" starts when the task is queued to the workers, so this overestimates its
            # run time by at most one task; a bystander killed by it is only rerun, not failed.
            since = started.setdefault(fut, now)
            limit = hard_limit(task)
            if limit is not None and now - since > limit:
                assert self._pool is not None
                for proc in list((self._pool._processes or {}).values()):
                    proc.kill()
                return

    def _submit(
        self, pending: dict[Future[Any], Any], fn: Callable[[Any], Any], task: Any, backlog: collections.deque[Any]
    ) -> bool:
        """Submit ``task``; False (and the task back in the backlog) if the pool is broken."""
        assert self._pool is not None
        try:
            pending[self._pool.submit(fn, task)] = task
        except BrokenProcessPool:
            backlog.appendleft(task)  # never started: it goes to the next pool, not to the suspects
            return False
        return True

    def _run_isolated(self, fn: Callable[[Any], Any], tasks: list[Any], workers: int, ctx: Any) -> Iterator[Any]:
        """Run each task in a process of its own (``workers`` at a time): a death is that task's."""
        queue = collections.deque(tasks)
        running: dict[Connection, tuple[Any, Any]] = {}
        try:
            while queue or running:
                while queue and len(running) < workers:
                    task = queue.popleft()
                    reader, writer = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=_call_isolated, args=(writer, os.getpid(), fn, task), daemon=True)
                    proc.start()
                    writer.close()  # ours closed: the reader sees EOF when the child dies
                    limit = hard_limit(task)
                    running[reader] = (proc, task, time.monotonic() + limit if limit is not None else None)
                deadlines = [d for _, _, d in running.values() if d is not None]
                wait_for = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                ready = wait_for_connections(list(running), timeout=wait_for)
                now = time.monotonic()
                for reader, (proc, task, deadline) in list(running.items()):
                    if reader not in ready and deadline is not None and now >= deadline:
                        del running[reader]
                        proc.kill()
                        proc.join()
                        reader.close()
                        yield TaskLost(
                            task,
                            f"cell timed out after {task.timeout:g} s (cell_timeout); "
                            f"its worker process did not stop and was killed",
                        )
                for reader in ready:
                    proc, task, _ = running.pop(reader)
                    try:
                        message = reader.recv()
                    except Exception:  # noqa: BLE001 - EOF or a message cut by the death
                        message = None
                    reader.close()
                    proc.join()
                    if message is None:
                        yield TaskLost(task, f"worker process died ({describe_exit(proc.exitcode)})")
                    elif message[0]:
                        yield message[1]
                    else:
                        raise message[1]
        finally:
            for reader, (proc, _, _) in running.items():  # the consumer stopped early, or a bug
                proc.kill()
                proc.join()
                reader.close()

    def _close_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        self._close_pool()


@hookimpl
def ldpbench_register_executors(registry):
    registry.register(InProcess)
    registry.register(ProcessPool)
