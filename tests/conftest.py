"""Shared fixtures (one plugin manager per test session: plugins are stateless classes), and the
tiers: where a test lives says whether it is in the fast tier.

The fast tier, ``pytest -m "not slow"``, is tests/unit/, tests/cli/ and tests/meta/; every test
collected under a slow-tier folder is marked ``slow`` here, so that no test is marked by hand
(tests/meta/test_tiers.py keeps it so).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from support import TESTS, builtin_plugins

# Property tests draw the same examples on every run and machine: a failure is a failure of the
# code, reproducible by rerunning, never a CI flake decided by a random seed (and no example
# database is left in the tree). --hypothesis-seed still explores other examples on demand.
settings.register_profile("ldpbench", derandomize=True, database=None, print_blob=True)
settings.load_profile("ldpbench")

ROOT = Path(__file__).resolve().parents[1]

# One BLAS thread per process: xdist already runs a worker per core, and OpenBLAS's own threads on
# top of that spin on the busy cores (about 10% of the suite's CPU, measured on 2 cores). Set here,
# before the workers and the tests' subprocesses start, so they inherit it; a value the caller set
# is kept.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

#: The folders of tests/ by tier: the fast one runs every few edits, the slow one in the full suite.
FAST_TIER = ("unit", "cli", "meta")
SLOW_TIER = ("statistical", "conformance", "hardening", "benchmarks", "system")


def tier_folder(path: Path) -> str | None:
    """The folder of tests/ a test file lives in (None outside tests/)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else None


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if tier_folder(item.path) in SLOW_TIER:
            item.add_marker(pytest.mark.slow)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Benchmarks time one process on a quiet machine: ``--benchmark-enable`` or ``--benchmark-only``
    runs without workers (pytest-benchmark would otherwise disable itself under xdist)."""
    if config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False):
        return 0
    return None  # xdist's own choice: one worker per core (capped by --maxprocesses)


@pytest.fixture(scope="session")
def plugins():
    """The built-in plugins, unmodified (tests/support.py:builtin_plugins, built once per process)."""
    return builtin_plugins()


@pytest.fixture
def run_cli(tmp_path):
    """Run the real ``ldpbench`` command in a temp dir; returns CompletedProcess."""

    def _run(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None):
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "ldpbench", *map(str, args)],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )

    return _run
