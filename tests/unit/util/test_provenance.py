"""Paths and the program a manifest records are portable (ldpbench/util/provenance.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ldpbench.util.provenance import portable_argv, portable_path


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
