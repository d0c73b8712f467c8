"""Lint and format, as part of the suite CI runs (`.ci/run` runs exactly the README's test command).

ruff is pinned in the ``test`` extra so every machine lints with the same rules; the rules live in
``[tool.ruff]`` in ``pyproject.toml``. Fix what these report with ``ruff check --fix .`` and
``ruff format .``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install -e '.[test]' installs it")
    return [found]


def test_ruff_check_is_clean():
    out = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_leaves_every_file_as_it_is():
    out = subprocess.run([*_ruff(), "format", "--no-cache", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
