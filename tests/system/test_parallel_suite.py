"""The suite runs on every core (pytest-xdist, ``addopts`` in pyproject.toml), and the two things
that must not run that way still do not: a benchmark run times one process, and the leaderboard
gate's summary line reaches the terminal from a worker (tests/system/test_pytest_plugin.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_benchmark_run_uses_no_workers_and_times_its_benchmarks():
    # pytest-benchmark disables itself under xdist; tests/conftest.py asks xdist for no workers.
    # The child must not look like a worker itself (this test may run in one).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/benchmarks/test_bench_pgr.py", "-k", "per_user and 4.0"]
        + ["--benchmark-enable", "--benchmark-only", "--benchmark-max-time=0", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "workers" not in done.stdout
    assert "benchmark: 1 tests" in done.stdout and "test_bench_pgr_per_user[4.0]" in done.stdout
