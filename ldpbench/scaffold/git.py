"""The generated repository's history: ``git init`` and two commits, so it is ready to push.

The baseline's manifest records the commit it was computed at (``results/manifest.py``); a
repository without a commit recorded ``commit: null`` in its first baseline although the docs
call it ready to push. So the files are committed first, the baseline is computed at that
commit, and the baseline is committed on top — the history a maintainer would have made.

Nothing is done (and the reason is returned) when git is missing or the folder already lies
inside a work tree: a plugin written into a monorepo belongs to that repository's history.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: Author of the two commits when the user has no git identity configured (a fresh CI box):
#: a commit must have one, and failing the whole scaffold over it would help nobody.
FALLBACK_IDENTITY = {"user.name": "ldpbench new-plugin", "user.email": "new-plugin@ldpbench.invalid"}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False, timeout=60)


def why_not_a_repository(root: Path) -> str | None:
    """None when ``root`` can become a repository of its own, else why not (one line)."""
    if shutil.which("git") is None:
        return "git is not installed"
    inside = _git(root, "rev-parse", "--show-toplevel")
    if inside.returncode == 0:
        return f"{root} is inside the git work tree {inside.stdout.strip()}"
    return None


def _identity(root: Path) -> list[str]:
    """``-c key=value`` for each part of the identity the user has not configured."""
    flags = []
    for key, value in FALLBACK_IDENTITY.items():
        if not _git(root, "config", "--get", key).stdout.strip():
            flags += ["-c", f"{key}={value}"]
    return flags


def init_and_commit(root: Path, message: str) -> str:
    """``git init`` (branch ``main``) and commit everything in ``root``; returns the commit."""
    init = _git(root, "init", "-q", "-b", "main")
    if init.returncode != 0:  # git before 2.28 has no -b
        init = _git(root, "init", "-q")
    _check(init, "git init")
    return commit_all(root, message)


def commit_all(root: Path, message: str) -> str:
    """Commit every file in ``root``; returns the new commit."""
    _check(_git(root, "add", "-A"), "git add")
    _check(_git(root, *_identity(root), "commit", "-q", "--no-verify", "-m", message), "git commit")
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    if proc.returncode != 0:
        from ldpbench.errors import UsageError

        raise UsageError(f"{what} failed in the new repository: {(proc.stderr or proc.stdout).strip()[:500]}")
