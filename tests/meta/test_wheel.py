"""Every package of the source tree is listed in ``pyproject.toml``, so that a wheel carries it
(an editable install reads the source tree and hides a missing one). The wheel built and
installed: tests/system/test_wheel.py."""

from __future__ import annotations

import sys
from pathlib import Path

from support import PACKAGE_DIRS, source_packages

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10, which pyproject allows: the same parser from PyPI (the test extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == PACKAGE_DIRS
    missing = source_packages() - set(config["packages"])
    assert not missing, f"packages missing from [tool.setuptools] packages (not in a wheel): {sorted(missing)}"
