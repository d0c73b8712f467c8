"""Cells run with one BLAS thread, whatever the machine, and the caller's setting comes back.

Executors already run a cell per core; a threaded BLAS inside each oversubscribes the machine and
may make a reduction's order depend on the core count (ldpbench/engine/threads.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import ldpbench
from ldpbench.engine import threads

blas_pools = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
needs_blas = pytest.mark.skipif(not blas_pools, reason="no BLAS thread pool found in this process")


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@needs_blas
def test_the_body_runs_single_threaded_and_the_setting_is_restored():
    with threadpool_limits(limits=2, user_api="blas"):
        outside = _blas_threads()
        with threads.one_native_thread():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == outside


SPEC = {
    "name": "threads",
    "seed": 1,
    "repeats": 1,
    "datasets": [{"zipf": {"d": 8, "n": 500, "s": 1.1}}],
    "epsilons": [1],
    "oracles": ["grr"],
    "pipelines": ["base", "blas-probe"],
    "metrics": ["mse"],
}


PROBE = """\
from threadpoolctl import threadpool_info

from ldpbench import hookimpl
from ldpbench.types import PostProcessor


class BlasProbe(PostProcessor):
    \"\"\"Records the most BLAS threads it sees in the row's diagnostics.\"\"\"

    name = "blas-probe"

    def apply(self, estimate, rng):
        seen = max([lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] or [0])
        return estimate.replace(info={**estimate.info, "diagnostics": {"blas_threads": seen}})


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(BlasProbe)
"""


@needs_blas
@pytest.mark.parametrize("workers", [1, 2])
def test_a_plugin_sees_one_blas_thread_in_process_and_on_the_pool(tmp_path, workers):
    (tmp_path / "pl").mkdir()
    (tmp_path / "pl" / "probe.py").write_text(PROBE)
    with threadpool_limits(limits=2, user_api="blas"):
        ldpbench.run(SPEC, tmp_path / "run", workers=workers, plugins_dirs=[tmp_path / "pl"])
        assert set(_blas_threads()) == {2}  # the caller's setting, back after the run
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    probed = [r for r in rows if r.get("pipeline") == "blas-probe"]
    assert probed and all(json.loads(r["info"]) == {"blas_threads": 1} for r in probed)
    assert np.isfinite([r["value"] for r in probed]).all()
