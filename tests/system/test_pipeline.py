"""Plugin warnings reach the result rows (column ``notes``) and the run's summary: a capped EM run."""

from __future__ import annotations

import json

SPEC = """\
name: notes
seed: 5
repeats: 2
datasets: [adult]
users: [{epsilon: 0.5, count: 1070}]
oracles: [grr]
pipelines: [base, {em: {max_iter: 5}}]
metrics: [mse]
executor: in-process
"""


def test_a_capped_em_run_is_noted_in_its_rows_and_on_stderr(tmp_path, run_cli):
    (tmp_path / "spec.yaml").write_text(SPEC)
    out = run_cli("run", "spec.yaml", "--out", "res")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in (tmp_path / "res" / "results.jsonl").read_text().splitlines()[1:]]
    notes = {r["pipeline"]: r["notes"] for r in rows}
    assert notes["base"] is None
    assert notes["em(max_iter=5)"].startswith("EM hit the iteration cap (5)")
    assert "2 result rows carry plugin warnings" in out.stderr
    assert "users 1070@0.5" in out.stdout  # an unnamed users mix is labelled by its groups
