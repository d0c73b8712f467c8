"""``ldpbench new-plugin``: the repository layout it writes, the project URL it names, and what it refuses.

That the repositories it writes install and pass their own tests: tests/system/test_new_plugin.py.
"""

from __future__ import annotations

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
    assert spec["repeats"] == 40 and f"my-{kind}" in (dest / "specs/ci.yaml").read_text()
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
