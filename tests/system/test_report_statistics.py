"""The report's statistics sections: uniform baseline, theory vs measurement, ranks with a CD PNG."""

from __future__ import annotations

import ldpbench
from ldpbench.report.markdown import write_report


def test_report_states_baseline_theory_and_ranks(tmp_path):
    spec = {
        "name": "sections",
        "seed": 2,
        "repeats": 4,
        "datasets": [{"zipf": {"d": 64, "n": 20000, "s": 1.5}}],
        "epsilons": [0.01, 1, 4],
        "oracles": ["grr", "oue"],
        "pipelines": ["base", "norm-sub", "uniform"],
        "metrics": ["mse"],
    }
    ldpbench.run(spec, tmp_path / "r", workers=1)
    report = write_report(tmp_path / "r", tmp_path / "rep")
    text = report.markdown.read_text()
    assert "## Against the uniform baseline" in text
    assert "| oue | base | mse | sometimes (2 of 3 cells) |" in text  # eps 0.01: 1/d wins
    assert "## Theory beside measurement" in text and "| measured/theory |" in text
    assert "## Ranks across the grid · mse" in text and (tmp_path / "rep" / "cd-mse.png").is_file()
