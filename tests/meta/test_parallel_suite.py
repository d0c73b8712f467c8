"""The suite runs on every core (pytest-xdist, ``addopts`` in pyproject.toml); that a benchmark run
still uses no workers is tests/system/test_parallel_suite.py."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_is_distributed_by_default():
    addopts = [line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("addopts")]
    assert len(addopts) == 1 and "-n auto" in addopts[0] and "--maxprocesses" in addopts[0]
