"""``ldpbench.run``: the notebook face of ``ldpbench run`` (same numbers, same errors)."""

from __future__ import annotations

import json

import pytest
import yaml

import ldpbench
from ldpbench.errors import SpecError

SPEC = {
    "name": "notebook",
    "seed": 3,
    "repeats": 4,
    "datasets": [{"zipf": {"d": 32, "n": 5000, "s": 1.2}}],
    "epsilons": [1, 2],
    "oracles": ["grr", "oue"],
    "pipelines": ["base", "norm-sub"],
    "metrics": ["mse"],
}


@pytest.mark.slow
def test_a_mapping_runs_like_the_same_spec_file(tmp_path, run_cli):
    outcome = ldpbench.run(SPEC, tmp_path / "api", workers=1)
    assert outcome.failed_rows == 0 and outcome.leaderboard.height == 2 * 2 * 2
    (tmp_path / "notebook.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    cli = run_cli("run", "notebook.yaml", "--out", "cli", "--format", "json", "--workers", "2")
    assert cli.returncode == 0, cli.stderr
    from_cli = {(r["oracle"], r["pipeline"], r["epsilon"]): r["mean"] for r in json.loads(cli.stdout)}
    from_api = {
        (r["oracle"], r["pipeline"], r["epsilon"]): r["mean"] for r in outcome.leaderboard.iter_rows(named=True)
    }
    assert from_api == from_cli  # bit-identical: same seeds, same code path


def test_a_bad_mapping_raises_with_every_problem_located():
    bad = {**SPEC, "datasets": ["zipff"], "pipelines": ["norm_sub"]}
    with pytest.raises(SpecError) as exc:
        ldpbench.run(bad)
    assert any("unknown dataset 'zipff' — did you mean 'zipf'?" in p for p in exc.value.problems)
    assert any("did you mean 'norm-sub'?" in p for p in exc.value.problems)
    assert all(p.startswith("<spec>:") for p in exc.value.problems)
