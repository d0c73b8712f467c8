"""``ldpbench new-plugin``: the repository layout it writes, the project URL it names, and what it refuses.

That the repositories it writes install and pass their own tests: tests/system/test_new_plugin.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from ldpbench import __version__
from ldpbench.cli import main
from ldpbench.scaffold import KINDS
from ldpbench.scaffold.source import default_ldpbench_source, is_local, project_url, requirement_from_direct_url

ROOT = Path(__file__).resolve().parents[2]


def test_the_project_url_comes_from_the_installed_metadata():
    url = project_url()
    assert url and url.startswith("https://"), "pyproject.toml [project.urls] Repository is not in the metadata"


def test_the_default_source_is_where_this_ldpbench_was_installed_from():
    # The test environment is an editable install of this checkout (pip records the folder,
    # PEP 610); a tag named after the version (v0.1.0) that the repository lacks is never guessed.
    assert default_ldpbench_source() == f"ldpbench @ {ROOT.as_uri()}"
    assert is_local(default_ldpbench_source())


@pytest.mark.parametrize(
    ("info", "requirement"),
    [
        (
            {
                "url": "https://github.com/me/ldpbench",
                "vcs_info": {"vcs": "git", "commit_id": "a1b2c3", "requested_revision": "main"},
            },
            "ldpbench @ git+https://github.com/me/ldpbench@a1b2c3",  # the commit, not the moving branch
        ),
        ({"url": "file:///src/ldpbench", "dir_info": {"editable": True}}, "ldpbench @ file:///src/ldpbench"),
        ({"url": "file:///src/ldpbench", "dir_info": {}}, "ldpbench @ file:///src/ldpbench"),
        (
            {"url": "file:///tmp/ldpbench-0.1.0-py3-none-any.whl", "archive_info": {"hashes": {}}},
            "ldpbench @ file:///tmp/ldpbench-0.1.0-py3-none-any.whl",
        ),
        (
            {"url": "https://x.org/mono.git", "vcs_info": {"vcs": "git", "commit_id": "ff"}, "subdirectory": "py"},
            "ldpbench @ git+https://x.org/mono.git@ff#subdirectory=py",
        ),
        ({"url": "https://x.org/r.git", "vcs_info": {"vcs": "git"}}, None),  # no commit: nothing to pin
        ({"dir_info": {}}, None),
        ({"url": "file:///x"}, None),
    ],
)
def test_the_recorded_install_source_becomes_a_requirement(info, requirement):
    assert requirement_from_direct_url(info) == requirement


def test_without_a_recorded_source_new_plugin_asks_for_one(tmp_path, capsys, monkeypatch):
    import ldpbench.scaffold as scaffold

    monkeypatch.setattr(scaffold, "default_ldpbench_source", lambda: None)
    assert main(["new-plugin", "mine", "--kind", "metric", str(tmp_path / "r"), "--no-baseline"]) == 2
    assert "pass --ldpbench-source" in capsys.readouterr().err
    source = "ldpbench @ git+https://github.com/me/ldpbench@a1b2c3"
    assert (
        main(
            [
                "new-plugin",
                "mine",
                "--kind",
                "metric",
                str(tmp_path / "r"),
                "--no-baseline",
                "--ldpbench-source",
                source,
            ]
        )
        == 0
    )
    assert f'pip install "{source}"' in (tmp_path / "r" / "README.md").read_text()
    assert "A local path" not in (tmp_path / "r" / ".github/workflows/tests.yml").read_text()


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
    files = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    assert {f for f in files if not f.startswith(".git/")} == expected
    # a repository of its own, everything committed (with --no-baseline: one commit)
    log = subprocess.run(["git", "log", "--format=%s"], cwd=dest, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == [f"ldpbench new-plugin my-{kind} --kind {kind}"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=dest, capture_output=True, text=True, check=True)
    assert status.stdout == ""
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


def test_a_longitudinal_protocol_with_the_longitudinal_variant(tmp_path, capsys):
    """--kind protocol --variant longitudinal writes the memoized GRR example on a population over rounds
    (its generated tests run in tests/system/test_new_plugin.py); another pairing is refused."""
    dest = tmp_path / "repo"
    args = ["new-plugin", "my-memo", "--kind", "protocol", "--variant", "longitudinal", str(dest), "--no-baseline"]
    assert main(args) == 0
    module = (dest / "ldpbench_my_memo" / "__init__.py").read_text()
    assert 'records=("sequence",)' in module and "def static_supports" in module and "epsilon_inf" in module
    assert "zipf-rounds" in (dest / "specs/ci.yaml").read_text()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=dest, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == ["ldpbench new-plugin my-memo --kind protocol --variant longitudinal"]


def test_the_multidimensional_variant_passes_the_kit_as_written_and_other_kinds_have_none(tmp_path, capsys):
    import importlib.util

    from ldpbench.testing import check_protocol

    dest = tmp_path / "md"
    args = ["new-plugin", "my-md", "--kind", "protocol", "--variant", "multidimensional", str(dest)]
    assert main([*args, "--no-baseline", "--no-git"]) == 0
    assert "adult-attributes" in (dest / "specs/ci.yaml").read_text()
    spec = importlib.util.spec_from_file_location("ldpbench_my_md", dest / "ldpbench_my_md" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    outcome = check_protocol(module.MyMd)
    assert {k: v for k, v in outcome.items() if "multidim" in k} == dict.fromkeys(
        [
            "check_protocol_multidim_accounting",
            "check_protocol_multidim_unbiased",
            "check_protocol_multidim_whole_report",
        ],
        "passed",
    )
    other = ["new-plugin", "mine", "--kind", "metric", "--variant", "multidimensional", str(tmp_path / "m")]
    assert main([*other, "--no-baseline"]) == 2
    assert "--variant of a metric: one of none" in capsys.readouterr().err
