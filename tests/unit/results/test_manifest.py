"""The commit a manifest records (ldpbench/results/manifest.py): None when there is none, else the sha."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ldpbench.results.manifest import git_commit
from ldpbench.util.provenance import portable_argv, portable_path


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@needs_git
def test_commit_is_none_before_the_first_commit_and_the_sha_after(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    # `git rev-parse HEAD` prints the word HEAD here; a baseline must not record it as a commit.
    assert git_commit(tmp_path) is None
    (tmp_path / "f").write_text("x")
    _git(tmp_path, "add", "f")
    _git(tmp_path, "commit", "-q", "-m", "first")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert git_commit(tmp_path) == sha and len(sha) >= 40


def test_commit_is_none_outside_a_repository(tmp_path: Path) -> None:
    # GIT_CEILING_DIRECTORIES is not needed: tmp_path is under the system temp folder, no repo.
    assert git_commit(tmp_path) is None
