"""``ldpbench new-plugin``: the repository it writes installs, and its tests pass as generated.

The slow test generates one plugin of every kind (each baseline computed by running the generated
gate once), pip-installs them (a real build of each generated pyproject.toml, into a folder put
on PYTHONPATH, so this environment is left alone) and runs each repository's own tests.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ldpbench import __version__
from ldpbench.cli import main
from ldpbench.scaffold import KINDS
from ldpbench.scaffold.source import default_ldpbench_source, project_url


def test_the_project_url_comes_from_the_installed_metadata():
    url = project_url()
    assert url and url.startswith("https://"), "pyproject.toml [project.urls] Repository is not in the metadata"
    assert default_ldpbench_source() == f"ldpbench @ git+{url}@v{__version__}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_repository_layout(tmp_path, kind, capsys):
    dest = tmp_path / "repo"
    assert main(["new-plugin", f"my-{kind}", "--kind", kind, str(dest), "--no-baseline"]) == 0
    assert "next: cd" in capsys.readouterr().err
    module = f"ldpbench_my_{kind}"
    expected = {
        "pyproject.toml",
        "README.md",
        ".gitignore",
        f"{module}/__init__.py",
        "tests/test_conformance.py",
        "tests/test_leaderboard.py",
        "specs/ci.yaml",
        ".github/workflows/tests.yml",
    }
    assert {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} == expected
    pyproject = (dest / "pyproject.toml").read_text()
    assert f'dependencies = ["ldpbench=={__version__}"]' in pyproject
    assert f'my-{kind} = "{module}"' in pyproject
    workflow = yaml.safe_load((dest / ".github/workflows/tests.yml").read_text())
    runs = [step.get("run", "") for step in workflow["jobs"]["test"]["steps"]]
    assert f'pip install "{default_ldpbench_source()}"' in runs and "pytest" in runs
    spec = yaml.safe_load((dest / "specs/ci.yaml").read_text())
    assert spec["repeats"] == 20 and f"my-{kind}" in (dest / "specs/ci.yaml").read_text()
    compile((dest / module / "__init__.py").read_text(), "plugin", "exec")
    if kind == "oracle":
        assert "test_privacy_audit" in (dest / "tests/test_conformance.py").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["My_Oracle", "--kind", "oracle"], "lowercase words joined by hyphens"),
        (["grr", "--kind", "oracle"], "already installed"),
        (["x", "--kind", "oracle", "--ldpbench-source", ""], None),
    ],
)
def test_bad_names_are_usage_errors(tmp_path, args, message, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["new-plugin", *args, "--no-baseline"])
    if message is None:  # an empty --ldpbench-source falls back to the metadata's
        assert code == 0
        return
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_non_empty_folder_is_refused(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["new-plugin", "mine", "--kind", "metric", str(tmp_path), "--no-baseline"]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


@pytest.mark.slow
def test_every_kind_installs_and_its_generated_tests_pass(tmp_path):
    repos = []
    for kind in sorted(KINDS):
        dest = tmp_path / f"ldpbench-my-{kind}"
        assert main(["new-plugin", f"my-{kind}", "--kind", kind, str(dest)]) == 0
        assert (dest / "reports/baseline/leaderboard.json").is_file()
        assert (dest / "reports/baseline/manifest.json").is_file()
        repos.append(dest)
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), *map(str, repos)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        PYTHONDONTWRITEBYTECODE="1",
    )
    for repo in repos:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{repo.name}:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        assert "OK: " in proc.stdout and " 0 worse" in proc.stdout, proc.stdout[-2000:]
        if repo.name.endswith("oracle"):
            assert "test_privacy_audit PASSED" in proc.stdout or "passed" in proc.stdout
