"""``ldpbench leaderboard DIR --failures`` (issue 10): every failed row, its error and where in
plugin code it was raised (file:line). Before, a failed row kept only ``ExcType: message``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from ldpbench.cli import main

FIXTURES = Path(__file__).parents[1] / "hardening" / "fixtures"

SPEC = """\
name: failing
seed: 8
repeats: 2
datasets:
  - zipf: {d: 16, n: 2000, s: 1.2}
epsilons: [1]
oracles: [grr]
pipelines: [base, PIPE]
metrics: [mse]
"""


def _run(tmp_path, pipe):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC).replace("PIPE", pipe))
    return main(
        [
            "run",
            str(tmp_path / "spec.yaml"),
            "--out",
            str(tmp_path / "out"),
            "--plugins-dir",
            str(FIXTURES),
            "--workers",
            "1",
            "--no-progress",
        ]
    )


def _line_of(text: str) -> int:
    source = (FIXTURES / "faulty_plugins.py").read_text().splitlines()
    return next(i for i, line in enumerate(source, 1) if text in line)


def test_failures_lists_each_failed_row_with_error_and_location(tmp_path, capsys):
    assert _run(tmp_path, "{faulty-pp: {fault: value-error}}") == 3
    assert f"ldpbench leaderboard {tmp_path / 'out'} --failures" in capsys.readouterr().err
    assert main(["leaderboard", str(tmp_path / "out"), "--failures", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    plugin = FIXTURES / "faulty_plugins.py"
    raising = _line_of('raise ValueError("plain failure")')
    calling = _line_of("misbehave(self.fault, hang=hang_here(estimate.epsilon, estimate.n))")
    where = f"{plugin}:{raising} in misbehave <- {plugin}:{calling} in apply"  # innermost first
    assert rows == [
        {
            "dataset": "zipf(d=16,n=2000,s=1.2)",
            "users": "",
            "epsilon": 1.0,
            "oracle": "grr",
            "pipeline": "faulty-pp(fault=value-error)",
            "metric": "mse",
            "repeat": repeat,
            "error": "pipeline 'faulty-pp(fault=value-error)': ValueError: plain failure",
            "where": where,
        }
        for repeat in (0, 1)
    ]
    assert main(["leaderboard", str(tmp_path / "out"), "--failures"]) == 0
    table = capsys.readouterr().out
    assert "plain failure" in table and "faulty_plugins.py" in table and "in misbehave" in table


def test_no_failures_says_so(tmp_path, capsys):
    assert _run(tmp_path, "norm-sub") == 0
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "out"), "--failures"]) == 0
    assert capsys.readouterr().out == "no failed rows\n"
    assert main(["leaderboard", str(tmp_path / "out"), "--failures", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
