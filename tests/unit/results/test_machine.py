"""The run manifest records what decides the last bits of the numbers (issue 10: numpy's version,
its SIMD baseline and dispatched features, the BLAS, scipy's and polars's versions)."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import numpy as np
import polars
import pytest
import scipy

import ldpbench
from ldpbench.results import machine
from ldpbench.results.manifest import machine_info


SPEC = {
    "name": "provenance",
    "seed": 1,
    "repeats": 1,
    "datasets": [{"zipf": {"d": 8, "n": 500, "s": 1.2}}],
    "epsilons": [1],
    "oracles": ["grr"],
    "pipelines": ["base"],
    "metrics": ["mse"],
}


def test_machine_info_names_the_numeric_libraries_and_numpys_kernels():
    info = machine_info()
    assert info["numpy"] == np.__version__
    assert (info["scipy"], info["polars"]) == (scipy.__version__, polars.__version__)
    simd = info["numpy_simd"]
    assert set(simd) == {"baseline", "dispatched", "not_dispatched"}
    assert all(isinstance(name, str) for names in simd.values() for name in names)
    assert not set(simd["dispatched"]) & set(simd["not_dispatched"])
    assert set(info["blas"]) >= {"name", "version", "config"}
    json.dumps(info)  # it goes into manifest.json as it is


def test_the_loaded_blas_and_the_cells_threads_are_recorded(monkeypatch):
    libs = [
        {
            "user_api": "blas",
            "internal_api": "openblas",
            "version": "0.3.31",
            "architecture": "SkylakeX",
            "threading_layer": "pthreads",
            "num_threads": 2,
            "filepath": "/somewhere/libopenblas.so",
        },
        {"user_api": "openmp", "internal_api": "openmp", "version": None, "num_threads": 2},
    ]
    fake = types.ModuleType("threadpoolctl")
    fake.threadpool_info = lambda: libs
    monkeypatch.setitem(sys.modules, "threadpoolctl", fake)
    assert machine.blas()["loaded"] == [
        {
            "internal_api": "openblas",
            "version": "0.3.31",
            "architecture": "SkylakeX",
            "threading_layer": "pthreads",
            "num_threads": 2,
        }
    ]
    assert machine.blas()["cell_threads"] == 1


def test_the_run_manifest_carries_it(tmp_path):
    ldpbench.run(SPEC, tmp_path / "run", workers=1)
    recorded = json.loads((tmp_path / "run" / "manifest.json").read_text())["machine"]
    assert recorded["numpy_simd"] == machine.numpy_simd()
    assert recorded["blas"]["name"] == machine.blas()["name"]
    assert (recorded["numpy"], recorded["scipy"], recorded["polars"]) == (
        np.__version__,
        scipy.__version__,
        polars.__version__,
    )
