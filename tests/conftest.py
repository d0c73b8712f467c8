"""Shared fixtures: one plugin manager per test session (plugins are stateless classes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ldpbench import build_plugins

ROOT = Path(__file__).resolve().parents[1]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Benchmarks time one process on a quiet machine: ``--benchmark-enable`` or ``--benchmark-only``
    runs without workers (pytest-benchmark would otherwise disable itself under xdist)."""
    if config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False):
        return 0
    return None  # xdist's own choice: one worker per core (capped by --maxprocesses)


@pytest.fixture(scope="session")
def plugins():
    return build_plugins()


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
