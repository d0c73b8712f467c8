"""Every package of the source tree is listed in ``pyproject.toml``, so that a wheel carries it
(an editable install reads the source tree and hides a missing one). The wheel built and
installed: tests/system/test_wheel.py."""

from __future__ import annotations

from pathlib import Path

import tomllib
from support import PACKAGE_DIRS, source_packages

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == PACKAGE_DIRS
    missing = source_packages() - set(config["packages"])
    assert not missing, f"packages missing from [tool.setuptools] packages (not in a wheel): {sorted(missing)}"
