"""``ldpbench report --facet/--only``: readable figures of a real run, identical series named together."""

from __future__ import annotations

import json
import shutil

import pytest
from support import cli

import ldpbench
from ldpbench.leaderboard.render import render
from ldpbench.report.markdown import load_leaderboard_frame

SPEC = {
    "name": "twins",
    "seed": 4,
    "repeats": 3,
    "datasets": [{"zipf": {"d": 16, "n": 3000, "s": 1.3}}],
    "epsilons": [1, 4],
    "oracles": ["grr", "oue"],
    "pipelines": ["base", "norm", "power", "calibrate"],
    "metrics": ["mse"],
}


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    root = tmp_path_factory.mktemp("twins")
    ldpbench.run(SPEC, root / "r", workers=1)
    lb, _ = load_leaderboard_frame(root / "r")  # what `ldpbench leaderboard r --format json` prints
    (root / "r" / "leaderboard.json").write_text(render(lb, "json"))
    return root / "r"


def test_identical_pipelines_are_drawn_once_from_their_repeats(twins, capsys, tmp_path):
    # GRR's estimate already sums to 1, so Norm returns it unchanged; Calibrate's default power-law
    # prior makes it Power. On OUE, Norm shifts the estimate: those lines stay apart.
    code, _, err = cli(capsys, "report", twins, "-o", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert (
        "Drawn once, identical values (same per-repeat values): base = norm (zipf(d=16,n=3000,s=1.3) · grr); "
        "power = calibrate (2 panels)."
    ) in md
    # the tables keep every row: merging is for the eye only
    assert md.count("| grr      | norm ") + md.count("| grr      | calibrate ") == 2


def test_a_bare_json_leaderboard_falls_back_to_its_aggregates_and_says_so(twins, capsys, tmp_path):
    shutil.copy(twins / "leaderboard.json", tmp_path / "leaderboard.json")
    code, _, err = cli(capsys, "report", tmp_path / "leaderboard.json", "-o", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Drawn once, identical values (same mean, standard error and CI: no per-repeat values stored)" in md
    assert "power = calibrate (2 panels)" in md


def test_facet_and_only_shape_the_figures(twins, capsys, tmp_path):
    code, _, err = cli(
        capsys,
        "report",
        twins,
        "-o",
        tmp_path / "rep",
        "--facet",
        "pipeline",
        "--only",
        "oracle=oue",
        "--only",
        "pipeline=base,norm",
    )
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "one panel per pipeline" in md
    assert "| grr " not in md and "| oue      | base " in md and "calibrate" not in md.split("## Ranks")[0]
    # the count line counts every PNG written, the critical-difference diagrams too (issue 29, shortfall 10)
    import re

    pngs = sorted(p.name for p in (tmp_path / "rep").glob("*.png"))
    figures, diagrams = map(int, re.search(r"(\d+) figures, (\d+) critical-difference diagrams\)", err).groups())
    assert figures + diagrams == len(pngs) and diagrams == sum(n.startswith("cd-") for n in pngs) > 0, (err, pngs)
    assert not [n for n in pngs if "=" in n]  # safe file names, and the report links them by those names
    assert all(f"({n})" in md for n in pngs)


def test_report_help_describes_the_default_facet(capsys):
    # issue 29 (shortfall 9): the help said "one panel per dataset x oracle", the default is otherwise
    with pytest.raises(SystemExit):
        cli(capsys, "report", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "dataset x oracle" not in text and "whichever of oracle and pipeline has fewer values" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--facet", "oracles"], "--facet: unknown column 'oracles' (did you mean 'oracle'?)"),
        (["--only", "oracle=olh"], "--only oracle=olh: no such oracle in these results"),
        (["--only", "pipeline"], "expected COLUMN=VALUE"),
        (["--max-lines", "0"], "--max-lines must be at least 1"),
        (["--threshold", "5%"], "--threshold and --z apply to a history report"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(twins, capsys, tmp_path, args, message):
    code, _, err = cli(capsys, "report", twins, "-o", tmp_path / "rep", *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_the_merged_ci_leaderboard_reads_each_specs_repeats(twins, capsys, tmp_path):
    # The layout of scripts/run_ci_leaderboard.sh: OUT/leaderboard.json, OUT/manifest.json with
    # the runs, OUT/<spec name>/results.jsonl.
    out = tmp_path / "ci"
    shutil.copytree(twins, out / "twins")
    shutil.copy(twins / "leaderboard.json", out / "leaderboard.json")
    manifest = json.loads((twins / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({"kind": "ldpbench-leaderboard", "runs": {"twins": manifest}}))
    code, _, err = cli(capsys, "report", out, "-o", tmp_path / "rep")
    assert code == 0, err
    assert "identical values (same per-repeat values)" in (tmp_path / "rep" / "report.md").read_text()
