"""ldpbench's version (ldpbench/util/version.py) is written once, in pyproject.toml, and read from
the installed distribution's metadata."""

from __future__ import annotations

import importlib.metadata

import tomllib
from support import ROOT

import ldpbench
from ldpbench.util.version import VERSION


def test_the_version_is_the_installed_distributions_and_pyprojects():
    written = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert VERSION == importlib.metadata.version("ldpbench") == written
    assert ldpbench.__version__ == VERSION
