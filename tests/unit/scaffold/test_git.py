"""The generated repository's history (ldpbench/scaffold/git.py)."""

from __future__ import annotations

import subprocess

from ldpbench.scaffold import git


def run(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_a_fresh_folder_becomes_a_repository_with_every_file_committed(tmp_path, monkeypatch):
    # no identity configured anywhere (a fresh CI box): the fallback author commits
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_AUTHOR_NAME", raising=False)
    monkeypatch.delenv("GIT_AUTHOR_EMAIL", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_NAME", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    assert git.why_not_a_repository(root) is None
    first = git.init_and_commit(root, "first")
    (root / "b.txt").write_text("b\n")
    second = git.commit_all(root, "second")
    assert run(root, "rev-parse", "HEAD").strip() == second != first
    assert run(root, "log", "--format=%s|%an").splitlines() == [
        "second|ldpbench new-plugin",
        "first|ldpbench new-plugin",
    ]
    assert run(root, "status", "--porcelain") == ""


def test_a_folder_inside_a_work_tree_is_left_to_that_repository(tmp_path):
    outer = tmp_path / "mono"
    outer.mkdir()
    run(outer, "init", "-q")
    inner = outer / "plugins" / "mine"
    inner.mkdir(parents=True)
    reason = git.why_not_a_repository(inner)
    assert reason is not None and "inside the git work tree" in reason and str(outer) in reason


def test_without_git_it_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(git.shutil, "which", lambda name: None)
    assert git.why_not_a_repository(tmp_path) == "git is not installed"
