"""Executors on this machine: in the calling process, or on a local process pool (the default).

Results do not depend on the executor: every cell draws from a random stream keyed by the spec
seed and the cell's identity, never by the order in which cells run.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Executor

#: At most this many local workers (a typo must not fork a process per cell).
MAX_WORKERS = 512


class InProcess(Executor):
    """Run cells one after another in this process (debugging, profiling, tiny specs)."""

    name = "in-process"

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        for task in tasks:
            yield fn(task)


class ProcessPool(Executor):
    """Run cells on a pool of local worker processes (default: one per core)."""

    name = "process-pool"
    params = (Param("workers", int, 0, "number of worker processes (0 = one per core)", min=0, max=MAX_WORKERS),)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._pool: ProcessPoolExecutor | None = None

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        workers = self.workers or os.cpu_count() or 1
        # "spawn" would re-import NumPy in every worker for nothing; "fork" is safe here because
        # workers touch no threads of the parent. Use forkserver where fork is unavailable.
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        tasks = iter(tasks)
        pending = set()
        # Keep a bounded number of tasks in flight so that a huge grid is not pickled up front.
        for task in tasks:
            pending.add(self._pool.submit(fn, task))
            if len(pending) >= 4 * workers:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
                nxt = next(tasks, None)
                if nxt is not None:
                    pending.add(self._pool.submit(fn, nxt))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


@hookimpl
def ldpbench_register_executors(registry):
    registry.register(InProcess)
    registry.register(ProcessPool)
