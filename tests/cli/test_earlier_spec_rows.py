"""A results folder keeps the rows of an earlier version of its spec; readers leave them out.

Reproduction on the code before the fix: run a spec with epsilons [1, 2], rerun it into the same
folder with [1] only. The run's own leaderboard shows epsilon 1; ``ldpbench leaderboard``,
``compare`` and ``report`` of the folder showed epsilon 2 as well, silently, from the old rows.
"""

from __future__ import annotations

import json
import re

from support import cli

SPEC = """\
name: versions
seed: 1
repeats: 3
datasets:
  - zipf: {d: 16, n: 2000, s: 1.3}
epsilons: [1, 2]
oracles: [grr]
pipelines: [base]
metrics: [mse]
"""
WARNING = "left out 3 stored cell(s) that the spec in its manifest.json does not have"


def _two_versions(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert cli(capsys, "run", spec, "--out", out, "--no-progress")[0] == 0
    spec.write_text(SPEC.replace("epsilons: [1, 2]", "epsilons: [1]"))
    code, _, err = cli(capsys, "run", spec, "--out", out, "--no-progress")
    assert code == 0 and "(0 run, 3 already done)" in err
    return out


def test_readers_show_only_the_current_spec_and_say_what_they_left_out(tmp_path, capsys):
    out = _two_versions(tmp_path, capsys)
    assert sum(1 for _ in (out / "results.jsonl").open()) > 1 + 3  # the old rows are still stored
    code, text, err = cli(capsys, "leaderboard", out, "--format", "json")
    assert code == 0 and {r["epsilon"] for r in json.loads(text)} == {1.0}
    assert f"ldpbench: warning: {out}: {WARNING}" in err
    code, text, err = cli(capsys, "compare", out, out, "--format", "json")
    assert code == 0 and WARNING in err
    assert {r["epsilon"] for r in json.loads(text)["rows"]} == {1.0}
    code, _, err = cli(capsys, "report", out, "--out", tmp_path / "report")
    assert code == 0 and WARNING in err
    assert "ε=2" not in (tmp_path / "report" / "report.md").read_text()


def test_the_library_reader_counts_them(tmp_path, capsys):
    import warnings

    from ldpbench.results.read import read_run
    from ldpbench.results.store import ResultsWarning

    out = _two_versions(tmp_path, capsys)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = read_run(out)
    assert run.left_out_cells == 3 and set(run.rows["epsilon"].to_list()) == {1.0}
    assert [w.category for w in caught] == [ResultsWarning]


def test_a_metric_added_reruns_the_cells_and_says_why_and_removed_the_readers_warn(tmp_path, capsys):
    # issue 29 (trial shortfall 11): adding a metric reran every cell and said only "(3 run, 0
    # already done)"; removing one leaves rows that leaderboard and rank leave out, with a warning
    import inspect

    import pytest

    from ldpbench.cli import rank_cmd
    from ldpbench.leaderboard.load import load_leaderboard_frame
    from ldpbench.results.store import ResultsWarning

    one = SPEC.replace("epsilons: [1, 2]", "epsilons: [1]")
    spec = tmp_path / "spec.yaml"
    spec.write_text(one)
    out = tmp_path / "out"
    assert cli(capsys, "run", spec, "--out", out, "--no-progress")[0] == 0
    spec.write_text(one.replace("[mse]", "[mse, l1]"))
    code, _, err = cli(capsys, "run", spec, "--out", out, "--no-progress")
    assert code == 0 and "(3 run, 0 already done)" in err
    assert "3 stored cells rerun: their stored rows lack pipelines or metrics new to the spec (base · l1)" in err
    spec.write_text(one)
    code, _, err = cli(capsys, "run", spec, "--out", out, "--no-progress")
    assert code == 0 and "(0 run, 3 already done)" in err and "stored cells rerun" not in err
    left_out = "stored row.s. of pipelines or metrics that the spec in its manifest.json does not have"
    code, _, err = cli(capsys, "leaderboard", out)
    assert code == 0 and re.search(left_out, err), err
    # rank reads the folder with the same loader (ranking needs a larger grid than this one)
    assert "load_leaderboard_frame(args.results)" in inspect.getsource(rank_cmd.run)
    with pytest.warns(ResultsWarning, match=left_out):
        load_leaderboard_frame(out)
