"""Run cells on a Dask distributed cluster: a throwaway local one, or an existing scheduler.

Install the extra first: ``pip install 'ldpbench[dask]'`` (dask.distributed is the well-kept
way to spread Python tasks over many machines; we do not write our own scheduler).

To use a cluster you already run, point the executor at its scheduler from the command line::

    ldpbench run spec.yaml --executor dask --executor-param scheduler=tcp://scheduler.example.org:8786

or ``ldpbench run spec.yaml --executor dask`` with ``LDPBENCH_DASK_SCHEDULER`` set
(``--executor-param scheduler_file=PATH`` for a file written by ``dask scheduler
--scheduler-file``). A spec cannot name a scheduler by itself (``executor: {dask: {scheduler:
...}}`` is refused unless you pass ``--trust-spec-params``): a scheduler sends back pickles,
which run code on the client, so where to connect is the user's choice, never a spec author's. Every worker
needs the same ldpbench and plugin distributions installed as the client (a ``--plugins-dir``
must exist at the same absolute path on every worker). Numbers do not depend on the executor:
each cell's random stream is keyed by the spec seed and the cell's identity (docs/scale-out.md).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Executor, ExecutorTags

#: The environment variable that names a scheduler when the spec and the flag do not.
SCHEDULER_ENV = "LDPBENCH_DASK_SCHEDULER"
#: Tasks kept in flight per worker: enough to keep every worker busy, few enough that a grid of a
#: million cells is not pickled and shipped to the scheduler up front.
IN_FLIGHT_PER_WORKER = 4
#: At most this many workers in a local cluster (a typo must not start a process per cell).
MAX_LOCAL_WORKERS = 512


class DaskExecutor(Executor):
    """Run cells on a Dask cluster (a local one unless a scheduler address is given)."""

    name = "dask"
    params = (
        Param(
            "scheduler",
            str,
            "",
            f"scheduler address, e.g. tcp://host:8786 (default: ${SCHEDULER_ENV} or a new local cluster)",
            user_only=True,
        ),
        Param(
            "scheduler_file",
            str,
            "",
            "scheduler file written by 'dask scheduler --scheduler-file' (instead of an address)",
            user_only=True,
        ),
        Param("workers", int, 0, "workers of the local cluster (0 = one per core)", min=0, max=MAX_LOCAL_WORKERS),
        Param("threads_per_worker", int, 1, "threads per local worker", min=1, max=64),
    )

    @classmethod
    def tags(cls) -> ExecutorTags:
        return ExecutorTags(bundles=True)  # a repeat's cells go to one worker (CellBundle)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._client: Any = None
        self._cluster: Any = None

    def _connect(self) -> Any:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("the dask executor needs dask.distributed: pip install 'ldpbench[dask]'") from None
        if self.scheduler_file:
            try:
                return Client(scheduler_file=self.scheduler_file, timeout="30s", set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler of {self.scheduler_file}: {exc}") from None
        address = self.scheduler or os.environ.get(SCHEDULER_ENV, "")
        if address:
            try:
                return Client(address, timeout="30s", set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        with warnings.catch_warnings():
            # Without a dashboard the scheduler still serves HTTP on :8787 and warns when another
            # cluster holds that port; it then takes a free one, which is all we need.
            warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
            self._cluster = LocalCluster(
                n_workers=self.workers or (os.cpu_count() or 1),
                threads_per_worker=self.threads_per_worker,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
        return Client(self._cluster, set_as_default=False)

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        tasks = iter(tasks)
        first = next(tasks, None)
        if first is None:
            return  # nothing to do: do not start a cluster for it
        from dask.distributed import as_completed

        if self._client is None:  # a second map (the runner's rerun of lost bundles) reuses it
            self._client = self._connect()
        workers = max(1, len(self._client.scheduler_info().get("workers", {})) or self.workers or 1)
        # pure=False: every task is distinct work even when two look alike to Dask's hashing.
        pending = as_completed([self._client.submit(fn, first, pure=False)], loop=self._client.loop)
        for task in tasks:
            pending.add(self._client.submit(fn, task, pure=False))
            if pending.count() >= IN_FLIGHT_PER_WORKER * workers:
                break
        for future in pending:
            result = future.result()
            future.release()
            nxt = next(tasks, None)
            if nxt is not None:
                pending.add(self._client.submit(fn, nxt, pure=False))
            yield result

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


@hookimpl
def ldpbench_register_executors(registry):
    registry.register(DaskExecutor)
