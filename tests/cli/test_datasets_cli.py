"""``ldpbench datasets``: lists every dataset with n, d and source, never failing on a missing file."""

from __future__ import annotations

import json

import pytest

from ldpbench.cli import main


@pytest.mark.slow
def test_datasets_table(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPBENCH_CACHE", str(tmp_path))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    assert "908,577" in lines["retail"] and "16,470" in lines["retail"]
    assert "294,009" in lines["kosarak-head"] and "PARTIAL" in lines["kosarak-head"]
    assert "needs the full kosarak.dat" in lines["kosarak"]
    assert "needs 'path'" in lines["fimi"]


def test_datasets_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPBENCH_CACHE", str(tmp_path))
    assert main(["datasets", "--json", "retail", "kosarak", "fimi"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows["retail"]["n"], rows["retail"]["d"], rows["retail"]["status"]) == (908_577, 16_470, "ok")
    assert rows["kosarak"]["status"] == "unavailable" and rows["kosarak"]["n"] is None
    assert rows["fimi"]["status"] == "needs-input"


def test_unknown_dataset_is_a_usage_error(capsys):
    assert main(["datasets", "retial"]) == 2
    assert "did you mean 'retail'" in capsys.readouterr().err
