"""ldpbench's version (ldpbench/util/version.py) is written once, in pyproject.toml, and read from
the installed distribution's metadata."""

from __future__ import annotations

import importlib.metadata
import sys

from support import ROOT

import ldpbench
from ldpbench.util.version import VERSION

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10, which pyproject allows: the same parser from PyPI (the test extra)
    import tomli as tomllib


def test_the_version_is_the_installed_distributions_and_pyprojects():
    written = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert VERSION == importlib.metadata.version("ldpbench") == written
    assert ldpbench.__version__ == VERSION
