"""Helpers shared by test modules (importable because ``pythonpath = ["tests"]`` in pyproject)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ldpbench.cli import main

#: This folder (tests/) and the repository's root: a test names files from these, wherever it lives.
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def cli(capsys: Any, *args: Any) -> tuple[int, str, str]:
    """``ldpbench ARGS`` in this process (cheaper than a subprocess): (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err
