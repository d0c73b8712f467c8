"""The commit a manifest records (ldpbench/results/manifest.py): None when there is none, else the sha."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ldpbench.results.manifest import git_commit

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


def test_git_dirty_says_whether_the_work_tree_has_uncommitted_changes(tmp_path):
    # issue 29 (trial shortfall 5): a baseline refreshed before the commit recorded a commit that
    # did not produce it, with no flag
    import subprocess

    from ldpbench.results.manifest import git_dirty

    assert git_dirty(tmp_path) is None  # not a repository
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=tmp_path, check=True)
    assert git_dirty(tmp_path) is False
    (tmp_path / "a.py").write_text("x = 2\n")
    assert git_dirty(tmp_path) is True


def test_git_dirty_leaves_out_the_excluded_paths(tmp_path):
    # issue 29 round 2: a baseline's own folder does not make its manifest dirty (untracked,
    # modified or renamed files in it), a change anywhere else does
    import subprocess

    from ldpbench.results.manifest import git_dirty

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    base = tmp_path / "reports" / "baseline"
    base.mkdir(parents=True)
    (base / "leaderboard.json").write_text("[]\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    assert git_dirty(tmp_path, exclude=[base]) is True  # a.py is new
    subprocess.run([*git, "add", "a.py"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=tmp_path, check=True)
    assert git_dirty(tmp_path) is True and git_dirty(tmp_path, exclude=[base]) is False  # untracked baseline
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "b"], cwd=tmp_path, check=True)
    (base / "leaderboard.json").write_text("[1]\n")
    subprocess.run(["git", "mv", "reports/baseline/leaderboard.json", "reports/baseline/lb.json"], cwd=tmp_path)
    assert git_dirty(tmp_path / "reports", exclude=[base]) is False  # from a subfolder too
    (tmp_path / "a b.py").write_text("y = 1\n")  # a name git would quote without -z
    assert git_dirty(tmp_path, exclude=[base]) is True
    assert git_dirty(tmp_path, exclude=[base, tmp_path / "a b.py"]) is False
