"""ldpbench's version: written once, in ``pyproject.toml``, and read here from the installed
distribution's metadata (``ldpbench.__version__`` is this value)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("ldpbench")
except PackageNotFoundError:  # a source tree on sys.path that was never installed (no built-ins either)
    VERSION = "0+unknown"
