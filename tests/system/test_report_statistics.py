"""The report's statistics sections: uniform baseline, theory vs measurement, ranks with a CD PNG."""

from __future__ import annotations

import json

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


def test_plugin_warnings_reach_the_report_and_the_leaderboard_each_naming_its_row(tmp_path):
    spec = {
        "name": "warnings",
        "seed": 3,
        "repeats": 2,
        "datasets": [{"zipf": {"d": 16, "n": 5000, "s": 1.3}}],
        "epsilons": [1],
        "oracles": ["grr", "oue"],
        "pipelines": ["base", {"ibu": {"solver": "iterate", "tol": 0, "max_iter": 2}}],
        "metrics": ["mse"],
    }
    outcome = ldpbench.run(spec, tmp_path / "r", workers=1)
    row = "{} · ibu(solver=iterate,tol=0,max_iter=2) at zipf(d=16,n=5000,s=1.3), ε=1"
    assert [line.split(": ibu hit")[0] for line in outcome.notes] == [row.format("grr"), row.format("oue")]
    board = json.loads((tmp_path / "r" / "leaderboard.json").read_text())
    rows = board["rows"] if isinstance(board, dict) else board
    assert any("iteration cap" in (r.get("notes") or "") and r["oracle"] == "grr" for r in rows)
    report = write_report(tmp_path / "r", tmp_path / "rep", html=True)
    text = report.markdown.read_text()
    assert "## Warnings" in text and f"| {row.format('grr')} | ibu hit its iteration cap" in text
    assert "<h2>Warnings</h2>" in report.html.read_text() and row.format("grr") in report.html.read_text()
