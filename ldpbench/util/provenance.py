"""How a manifest names files: relative paths, so that a manifest committed with a baseline says
the same thing on every checkout and does not carry one machine's home directory."""

from __future__ import annotations

import os
from pathlib import Path


def portable_path(path: str | os.PathLike[str], start: str | os.PathLike[str] | None = None) -> str:
    """``path`` relative to ``start`` (default: the working directory), in POSIX form.

    A spec given as ``/home/me/plugin/specs/ci.yaml`` from ``/home/me/plugin`` is recorded as
    ``specs/ci.yaml``. A path that has no relative form (another drive on Windows) is kept as given.
    """
    base = Path(start) if start is not None else Path.cwd()
    try:
        rel = os.path.relpath(Path(path).absolute(), base.absolute())
    except ValueError:
        return str(path)
    return Path(rel).as_posix()


def portable_argv(argv: list[str]) -> list[str]:
    """The command line as a manifest records it: the program by its name (not the absolute path of
    one machine's virtualenv), the arguments as they were typed."""
    if not argv:
        return []
    return [Path(argv[0]).name, *argv[1:]]
