"""``ldpbench datasets``: lists every dataset with n, d and source, never failing on a missing file."""

from __future__ import annotations

from ldpbench.cli import main


def test_datasets_table(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPBENCH_CACHE", str(tmp_path))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    assert "908,577" in lines["retail"] and "16,470" in lines["retail"]
    assert "294,009" in lines["kosarak-head"] and "PARTIAL" in lines["kosarak-head"]
    assert "needs the full kosarak.dat" in lines["kosarak"]
    assert "needs 'path'" in lines["fimi"]
