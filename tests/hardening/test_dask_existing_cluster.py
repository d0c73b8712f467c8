"""The Dask executor on a cluster it did not start: connected by scheduler address (docs/scale-out.md).

The test starts a real ``distributed.LocalCluster`` (2 worker processes, 1 thread each), standing
in for a cluster started with ``dask scheduler`` / ``dask worker``, and points ``ldpbench run`` at
it the two documented ways: the ``LDPBENCH_DASK_SCHEDULER`` environment variable with
``--executor dask``, and ``executor: {dask: {scheduler: ...}}`` in a spec the user trusts
(``--trust-spec-params``). Both must store rows
identical to an in-process run, and leave the cluster running (ldpbench only disconnects).
"""

from __future__ import annotations

import importlib.util
import logging
import textwrap

import polars as pl
import pytest

from ldpbench.cli import main
from ldpbench.results.store import ResultsStore

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="dask.distributed is not installed (pip install 'ldpbench[dask]')",
)

SPEC = """\
name: remote
seed: 2024
repeats: 3
simulation: per-user
datasets:
  - zipf: {d: 16, n: 3000, s: 1.2}
epsilons: [1, 4]
oracles: [grr, oue]
pipelines: [base, norm-sub]
metrics: [mse, set-query: {rho: 4}]
"""
CELLS = 2 * 2 * 3


def _rows(out) -> list[tuple]:
    # theory is NaN on processed rows (and the optional float columns, epsilon_inf ..., NaN where
    # they do not apply), and NaN != NaN in a tuple: compare every float column's text
    df = ResultsStore(out).load().drop("elapsed")
    df = df.with_columns(pl.col(n).cast(pl.String) for n, t in df.schema.items() if t == pl.Float64)
    assert df.height == CELLS * 2 * 2 and df["error"].null_count() == df.height
    return sorted(df.iter_rows())


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as running:
        yield running


def test_runs_on_an_existing_scheduler_by_address(cluster, tmp_path, monkeypatch, capsys):
    address = cluster.scheduler_address
    assert address.startswith("tcp://")
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    in_spec = tmp_path / "in-spec.yaml"
    in_spec.write_text(textwrap.dedent(SPEC) + f'executor: {{dask: {{scheduler: "{address}"}}}}\n')

    assert main(["run", str(spec), "--out", str(tmp_path / "ref"), "--workers", "1", "--no-progress"]) == 0
    reference = _rows(tmp_path / "ref")

    # Given an address, the executor must not start a cluster of its own.
    import dask.distributed

    def no_local_cluster(*args, **kwargs):
        raise AssertionError("the dask executor started a LocalCluster instead of using the scheduler")

    monkeypatch.setattr(dask.distributed, "LocalCluster", no_local_cluster)
    transitions = cluster.scheduler.transition_counter

    monkeypatch.setenv("LDPBENCH_DASK_SCHEDULER", address)
    assert main(["run", str(spec), "--out", str(tmp_path / "env"), "--executor", "dask", "--no-progress"]) == 0
    assert _rows(tmp_path / "env") == reference
    monkeypatch.delenv("LDPBENCH_DASK_SCHEDULER")

    # The command line names the scheduler: --scheduler ADDR (short for --executor dask
    # --executor-param scheduler=ADDR).
    assert main(["run", str(spec), "--out", str(tmp_path / "cli"), "--scheduler", address, "--no-progress"]) == 0
    assert _rows(tmp_path / "cli") == reference

    # A spec may name a scheduler only when the user says it is trusted (--trust-spec-params).
    assert main(["run", str(in_spec), "--out", str(tmp_path / "spec"), "--no-progress", "--trust-spec-params"]) == 0
    assert _rows(tmp_path / "spec") == reference
    assert f"{CELLS} cells ({CELLS} run, 0 already done)" in capsys.readouterr().err

    # The cells ran on this cluster's scheduler (each task makes several state transitions).
    assert cluster.scheduler.transition_counter - transitions >= 2 * CELLS
    # ldpbench disconnected; the cluster it did not start is still there with both workers.
    assert cluster.status.name == "running" and len(cluster.scheduler_info["workers"]) == 2
