"""``ldpbench.run`` with a mapping gives the numbers ``ldpbench run`` gives with the same spec file."""

from __future__ import annotations

import json

import yaml
from support import NOTEBOOK_SPEC

import ldpbench


def test_a_mapping_runs_like_the_same_spec_file(tmp_path, run_cli):
    outcome = ldpbench.run(NOTEBOOK_SPEC, tmp_path / "api", workers=1)
    assert outcome.failed_rows == 0 and outcome.leaderboard.height == 2 * 2 * 2
    (tmp_path / "notebook.yaml").write_text(yaml.safe_dump(NOTEBOOK_SPEC, sort_keys=False))
    cli = run_cli("run", "notebook.yaml", "--out", "cli", "--format", "json", "--workers", "2")
    assert cli.returncode == 0, cli.stderr
    from_cli = {(r["oracle"], r["pipeline"], r["epsilon"]): r["mean"] for r in json.loads(cli.stdout)}
    from_api = {
        (r["oracle"], r["pipeline"], r["epsilon"]): r["mean"] for r in outcome.leaderboard.iter_rows(named=True)
    }
    assert from_api == from_cli  # bit-identical: same seeds, same code path
