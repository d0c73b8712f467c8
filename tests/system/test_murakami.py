"""em-murakami ([MHS18] Algorithm 2): the chosen alpha reaches every result row of a run."""

from __future__ import annotations

import json
import math

SPEC = """\
name: alpha
seed: 5
repeats: 2
datasets: [adult]
users: [{epsilon: 0.5, count: 300}, {epsilon: inf, count: 20}]
oracles: [grr]
pipelines: [em, em-murakami]
metrics: [mse]
executor: in-process
"""


def test_the_chosen_alpha_reaches_every_result_row(tmp_path, run_cli):
    (tmp_path / "spec.yaml").write_text(SPEC)
    out = run_cli("run", "spec.yaml", "--out", "res")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in (tmp_path / "res" / "results.jsonl").read_text().splitlines()[1:]]
    infos = {(r["pipeline"], r["repeat"]): r["info"] for r in rows}
    assert infos[("em", 0)] is None
    for rep in (0, 1):
        alpha = json.loads(infos[("em-murakami", rep)])["alpha"]
        assert math.log10(alpha) == round(math.log10(alpha))
