"""Bit-identical results on every executor and for any worker count (issue 7, scale-out).

One small spec is run four times, each into its own results folder: in-process, on the local
process pool with 1 and with 2 workers, and on Dask with a real ``dask.distributed.LocalCluster``
(2 worker processes, 1 thread each, started by the executor). Every stored result row — the raw
per-repeat values, not only the leaderboard — must be bit-for-bit the same. This holds because each
cell draws from a random stream keyed by the spec seed and the cell's identity, never by which
worker ran it or in which order cells finished.

The spec mixes what could break that: the per-user path (chunked perturbation), a ``sample:``
dataset (users drawn afresh per repeat, population cached per worker), post-processors and a
metric that draw random numbers (set-query), two oracles, two budgets and several repeats.
"""

from __future__ import annotations

import importlib.util
import math
import struct
import textwrap
import time

import polars as pl
import pytest
from support import builtin_plugins

from ldpbench.engine.rows import COLUMNS
from ldpbench.results.store import ResultsStore
from ldpbench.runner import run_spec
from ldpbench.spec.validate import load_spec

SPEC = """\
name: identity
seed: 424242
repeats: 3
simulation: per-user
datasets:
  - zipf: {d: 24, n: 3000, s: 1.2}
  - uniform: {d: 16, n: 4000, sample: 1500}
epsilons: [0.5, 2]
oracles: [grr, oue]
pipelines:
  - base
  - norm-sub
  - [power, norm-sub]
metrics:
  - mse
  - set-query: {rho: 4}
"""
#: 2 datasets x 2 budgets x 2 oracles x 3 repeats.
CELLS = 24
#: Columns that legitimately differ between runs (wall time).
TIMING = ("elapsed",)
#: Position of ``value`` in a row tuple of :func:`_rows`.
VALUE = [c for c in COLUMNS if c not in TIMING].index("value")

HAVE_DASK = importlib.util.find_spec("dask") is not None and importlib.util.find_spec("distributed") is not None


def _bits(x: float) -> str:
    """A float's exact bit pattern (so 0.1 + 0.2 vs 0.3, or -0.0 vs 0.0, cannot pass as equal)."""
    return struct.pack("<d", x).hex()


def _rows(out_dir) -> list[tuple]:
    """Every stored row, timing dropped, values as bit patterns, in a fixed order."""
    df = ResultsStore(out_dir).load().drop(*TIMING)
    assert df["error"].null_count() == df.height, df.filter(pl.col("error").is_not_null())["error"].to_list()
    # Every float column (value, epsilon, theory, and the optional ones: epsilon_inf, central
    # epsilon, ...) as bit patterns: a NaN equals itself only so.
    floats = [name for name, dtype in df.schema.items() if dtype == pl.Float64]
    assert {"value", "epsilon", "theory"} <= set(floats)
    df = df.with_columns(pl.col(name).map_elements(_bits, return_dtype=pl.String) for name in floats)
    return sorted(df.iter_rows())


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("identity") / "identity.yaml"
    path.write_text(textwrap.dedent(SPEC))
    return path


def _run(spec_path, out_dir, **executor):
    plugins = builtin_plugins()
    spec = load_spec(spec_path, plugins)
    started = time.perf_counter()
    outcome = run_spec(spec, plugins, out_dir, progress=False, **executor)
    assert outcome.cells_run == CELLS and outcome.failed_rows == 0, outcome.errors
    return _rows(out_dir), time.perf_counter() - started


@pytest.fixture(scope="module")
def reference(spec, tmp_path_factory):
    rows, _ = _run(spec, tmp_path_factory.mktemp("in-process"), executor="in-process")
    # 24 cells x 3 pipelines x 2 metrics, all with a finite value.
    assert len(rows) == CELLS * 3 * 2
    return rows


def test_reference_rows_are_real_numbers(reference):
    values = [struct.unpack("<d", bytes.fromhex(r[VALUE]))[0] for r in reference]
    assert all(math.isfinite(v) and v >= 0 for v in values)
    assert len(set(values)) > len(values) // 2  # distinct cells give distinct numbers


@pytest.mark.parametrize("workers", [1, 2])
def test_process_pool_matches_in_process(spec, reference, tmp_path, workers):
    rows, _ = _run(spec, tmp_path / "pool", executor="process-pool", workers=workers)
    assert rows == reference


@pytest.mark.skipif(not HAVE_DASK, reason="dask.distributed is not installed (pip install 'ldpbench[dask]')")
def test_dask_local_cluster_matches_in_process(spec, reference, tmp_path):
    # The executor starts a LocalCluster: 2 worker processes, 1 thread each, and closes it after.
    rows, seconds = _run(spec, tmp_path / "dask", executor="dask", workers=2)
    assert rows == reference
    print(f"dask LocalCluster(2 x 1 thread) run: {seconds:.1f} s")


def test_a_different_seed_changes_the_numbers(spec, reference, tmp_path):
    # The identity above must not be vacuous: the rows do depend on the seed.
    other = tmp_path / "other.yaml"
    other.write_text(spec.read_text().replace("seed: 424242", "seed: 424243"))
    rows, _ = _run(other, tmp_path / "other", executor="in-process")
    assert [r[VALUE] for r in rows] != [r[VALUE] for r in reference]
