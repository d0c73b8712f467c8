"""Run cells on a Dask distributed cluster: a throwaway local one, or an existing scheduler.

Install the extra first: ``pip install 'ldpbench[dask]'`` (dask.distributed is the well-kept
way to spread Python tasks over many machines; we do not write our own scheduler).

To use a cluster you already run, point the executor at its scheduler::

    executor: {dask: {scheduler: "tcp://scheduler.example.org:8786"}}

or ``ldpbench run spec.yaml --executor dask`` with ``LDPBENCH_DASK_SCHEDULER`` set. Every worker
needs the same ldpbench and plugin distributions installed as the client. Numbers do not depend on
the executor: each cell's random stream is keyed by the spec seed and the cell's identity.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Executor


class DaskExecutor(Executor):
    """Run cells on a Dask cluster (a local one unless a scheduler address is given)."""

    name = "dask"
    params = (
        Param("scheduler", str, "", "scheduler address, e.g. tcp://host:8786 (default: $LDPBENCH_DASK_SCHEDULER or a new local cluster)"),
        Param("workers", int, 0, "workers of the local cluster (0 = one per core)", min=0),
        Param("threads_per_worker", int, 1, "threads per local worker", min=1),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._client = None
        self._cluster = None

    def _connect(self) -> Any:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("the dask executor needs dask.distributed: pip install 'ldpbench[dask]'") from None
        address = self.scheduler or os.environ.get("LDPBENCH_DASK_SCHEDULER", "")
        if address:
            return Client(address)
        self._cluster = LocalCluster(
            n_workers=self.workers or (os.cpu_count() or 1),
            threads_per_worker=self.threads_per_worker,
            processes=True,
            dashboard_address=None,
        )
        return Client(self._cluster)

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        from dask.distributed import as_completed

        self._client = self._connect()
        tasks = list(tasks)
        if not tasks:
            return
        # pure=False: every task is distinct work even when two look alike to Dask's hashing.
        futures = self._client.map(fn, tasks, pure=False)
        for future in as_completed(futures):
            yield future.result()
            future.release()

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
