"""The slow half of tests/unit/engine/test_shuffling.py: a whole run under `shuffle:` (docs/shuffling.md)."""

from __future__ import annotations

import json
import textwrap

from ldpbench.engine.shuffling import PROTOCOL_REASON
from ldpbench.privacy.shuffle import fmt21_numerical

SPEC = """\
name: shuf
repeats: 2
datasets:
  - zipf: {d: 16, n: 2000, s: 1.1}
epsilons: [1, 4]
oracles: [grr, blender]
metrics: [mse]
shuffle: {delta: 1.0e-6}
"""


def test_a_run_stores_the_columns_and_the_manifest_record(tmp_path, plugins):
    # End to end, in process (8 small cells): stored rows, manifest and leaderboard.
    from ldpbench import run

    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC))
    outcome = run(path, tmp_path / "out", executor="in-process", plugins=plugins)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    grr = [r for r in rows if r["oracle"] == "grr" and r["epsilon"] == 4.0]
    assert grr and all(r["central_epsilon"] == fmt21_numerical(4.0, 2000, 1e-6) for r in grr)
    assert all(r["central_bound"] == PROTOCOL_REASON for r in rows if r["oracle"].startswith("blender"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["shuffle"]["bound"] == "fmt21-numerical" and manifest["spec"]["shuffle"]["delta"] == 1e-6
    assert "central_epsilon" in outcome.leaderboard.columns
