"""The run manifest's machine records the kernels numpy dispatches: limited in a child process, the
record says so (issue 10)."""

from __future__ import annotations

import json
import subprocess
import sys

from ldpbench.results import machine


def test_dispatched_features_follow_what_numpy_runs_here():
    # Disabling every dispatched kernel (as tests/system/test_baseline_dispatch.py does) must show
    # in the manifest: same numpy, other kernels, so not the same machine for the promise.
    simd = machine.numpy_simd()
    every = [*simd["dispatched"], *simd["not_dispatched"]]
    env = {"NPY_DISABLE_CPU_FEATURES": " ".join(every), "PATH": "/usr/bin:/bin"}
    probe = "import json; from ldpbench.results.manifest import machine_info; print(json.dumps(machine_info()))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    limited = json.loads(done.stdout)
    assert limited["numpy_simd"]["dispatched"] == []
    assert sorted(limited["numpy_simd"]["not_dispatched"]) == sorted(every)
    assert limited["numpy_simd"]["baseline"] == simd["baseline"]
    assert limited["numeric_env"] == {"NPY_DISABLE_CPU_FEATURES": " ".join(every)}
