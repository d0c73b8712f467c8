"""What a manifest records about where it came from: the commit (None when there is none) and
spec paths relative to the working directory."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ldpbench.provenance import portable_path
from ldpbench.runner import git_commit

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


def test_portable_path_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert portable_path(tmp_path / "specs" / "ci.yaml") == "specs/ci.yaml"
    assert portable_path("specs/ci.yaml") == "specs/ci.yaml"
    assert portable_path(tmp_path.parent / "other.yaml") == "../other.yaml"
    assert portable_path(tmp_path / "a" / "b.yaml", start=tmp_path / "a") == "b.yaml"
