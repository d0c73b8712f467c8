"""One native thread (BLAS, OpenMP) while a cell runs.

Executors already put one cell on each core: the process pool starts a worker per core and Dask a
task per worker thread. A multithreaded BLAS inside each of them starts as many threads again per
matrix product, and on a busy machine the oversubscription is expensive: em-murakami's d x d
inverse at d = 281 took 0.39 s instead of 0.02 s on the shared 2-core box. It can also move last
bits: a threaded BLAS may split a reduction by thread, so the summation order would depend on
the machine's core count and on the executor, and the README promises the same numbers in one
process, on a pool of any size and on a cluster.

``threadpoolctl`` (the joblib / scikit-learn project's library) finds the native thread pools a
process has loaded -- numpy's and scipy's OpenBLAS are separate libraries -- and sets them to one
thread for the cell, restoring the caller's setting after it (an in-process run through
:func:`ldpbench.api.run` leaves a notebook's BLAS as it found it). It is used instead of
``OPENBLAS_NUM_THREADS`` because the environment is read once, when the library loads, which in
a forked pool worker has already happened in the parent.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from threadpoolctl import ThreadpoolController

#: Threads each native pool gets while a cell runs.
CELL_THREADS = 1

_cached: tuple[tuple[int, int], ThreadpoolController] | None = None


def _controller() -> ThreadpoolController:
    # Finding the loaded pools walks the process's shared libraries (about 0.7 ms): do it once per
    # process, and again only when modules were imported since (a plugin importing a compiled
    # extension may load another BLAS), not once per cell.
    global _cached
    key = (os.getpid(), len(sys.modules))
    if _cached is None or _cached[0] != key:
        _cached = (key, ThreadpoolController())
    return _cached[1]


@contextlib.contextmanager
def one_native_thread() -> Iterator[None]:
    """Run the body with every loaded BLAS and OpenMP pool at :data:`CELL_THREADS` thread."""
    with _controller().limit(limits=CELL_THREADS):
        yield
