"""What a manifest records about where it came from: the commit (None when there is none) and
spec paths relative to the working directory."""

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


def test_portable_path_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert portable_path(tmp_path / "specs" / "ci.yaml") == "specs/ci.yaml"
    assert portable_path("specs/ci.yaml") == "specs/ci.yaml"
    assert portable_path(tmp_path.parent / "other.yaml") == "../other.yaml"
    assert portable_path(tmp_path / "a" / "b.yaml", start=tmp_path / "a") == "b.yaml"


def test_the_manifest_names_the_program_not_its_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ldpbench

    monkeypatch.setattr("sys.argv", ["/home/me/project/.venv/bin/ldpbench", "run", "spec.yaml"])
    spec = {
        "name": "argv",
        "seed": 1,
        "repeats": 1,
        "datasets": [{"zipf": {"d": 8, "n": 100}}],
        "epsilons": [1],
        "oracles": ["grr"],
        "metrics": ["mse"],
    }
    ldpbench.run(spec, tmp_path / "out", workers=1)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["argv"] == ["ldpbench", "run", "spec.yaml"]
    assert portable_argv([]) == []
