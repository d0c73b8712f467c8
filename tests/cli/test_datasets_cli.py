"""``ldpbench datasets``: lists every dataset with n, d and source, never failing on a missing file."""

from __future__ import annotations

import json

from ldpbench.cli import main


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
