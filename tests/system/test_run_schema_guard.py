"""``ldpbench run`` into a folder written by another schema version changes nothing in it.

The run used to write its ``manifest.json`` first and only then read ``results.jsonl``: it exited
2 with the right message, but the newer ldpbench's manifest was already replaced by ours.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from ldpbench.results.versioning import SCHEMA_VERSION

SPEC = """\
name: guard
seed: 3
repeats: 2
datasets:
  - zipf: {d: 8, n: 500, s: 1.2}
epsilons: [1]
oracles: [grr]
pipelines: [base]
metrics: [mse]
"""


@pytest.mark.parametrize(
    "version, message",
    [
        (SCHEMA_VERSION + 1, "newer than the version"),
        (SCHEMA_VERSION - 1, "older than the version"),
    ],
)
def test_run_refuses_another_schema_before_writing_anything(tmp_path, run_cli, version, message):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    out = tmp_path / "out"
    out.mkdir()
    header = {"schema_version": version, "kind": "ldpbench-results", "written_by": "another ldpbench"}
    results = json.dumps(header) + "\n" + json.dumps({"cell_id": "x", "future_column": 1}) + "\n"
    manifest = json.dumps({"schema_version": version, "spec": {"name": "guard"}, "from": "the future"}, indent=2)
    (out / "results.jsonl").write_text(results)
    (out / "manifest.json").write_text(manifest)
    before = sorted(p.name for p in out.iterdir())

    proc = run_cli("run", "spec.yaml", "--out", "out", "--workers", "1", "--no-progress")
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "results.jsonl" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    # Nothing was written: same files (no leaderboard.json, no temporary manifest), same bytes.
    assert sorted(p.name for p in out.iterdir()) == before
    assert (out / "manifest.json").read_text() == manifest
    assert (out / "results.jsonl").read_text() == results
