"""Plugin warnings reach the result rows (column ``notes``) and the run's summary."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ldpbench.engine.pipeline import collect_warnings
from ldpbench.types import Estimate


def test_collect_warnings_reads_the_declared_field_not_info():
    est = Estimate(frequencies=np.zeros(2), n=1, epsilon=1.0)
    assert collect_warnings(est) is None
    noted = est.with_warning("EM hit the iteration cap").with_warning("power: alpha clamped")
    assert collect_warnings(noted.with_warning("EM hit the iteration cap")) == (
        "EM hit the iteration cap; power: alpha clamped"
    )
    # info is diagnostics for people: nothing there reaches the rows
    assert collect_warnings(est.replace(info={"warnings": ["x"], "power": {"warnings": ["y"]}})) is None


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


@pytest.mark.slow
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
