"""Resume never serves stale numbers (issue 10), end to end: an edited plugin, a changed
mechanism, a dataset file edited in place and rows edited by hand rerun their cells.

Reproduction on the code before the fix: run a spec, edit a plugin (even bumping its
``algorithm_version``), run again into the same folder: ``12 cells (0 run, 12 already done)`` and
the old numbers. An edited core: tests/cli/test_resume_identity.py.
"""

from __future__ import annotations

import json
import math

import pytest
from support import RESUME_CELLS, RESUME_PLUGIN, RESUME_SPEC, resume_project, run_resume


@pytest.fixture
def project(tmp_path):
    return resume_project(tmp_path)


def shrink_means(board):
    return sorted(r["mean"] for r in board if r["pipeline"] == "shrink")


@pytest.mark.parametrize(("version", "why"), [("1", "(source)"), ("2", "(algorithm_version 1 -> 2, source)")])
def test_an_edited_plugin_reruns_its_cells_and_says_why(project, capsys, version, why):
    code, first, _ = run_resume(capsys, project)
    assert code == 0
    (project / "pl" / "shrink.py").write_text(RESUME_PLUGIN.format(factor=2.0, version=version))
    code, second, err = run_resume(capsys, project)
    assert code == 0
    assert f"ldpbench: {RESUME_CELLS} cells rerun: postprocessor 'shrink' changed {why}" in err
    assert f"{RESUME_CELLS} cells ({RESUME_CELLS} run, 0 already done)" in err
    # The new numbers, not the stored ones: scaling by 2 makes every mse larger.
    assert all(b > a for a, b in zip(shrink_means(first), shrink_means(second)))
    # The rerun is now current: a third run reuses everything.
    code, third, err = run_resume(capsys, project)
    assert (
        code == 0 and f"{RESUME_CELLS} cells (0 run, {RESUME_CELLS} already done)" in err and "cells rerun" not in err
    )
    assert third == second


def test_no_recompute_refuses_stale_cells_and_leaves_the_folder_alone(project, capsys):
    assert run_resume(capsys, project)[0] == 0
    before = {p.name: p.read_bytes() for p in (project / "out").iterdir() if p.is_file()}
    (project / "pl" / "shrink.py").write_text(RESUME_PLUGIN.format(factor=2.0, version="1"))
    code, _, err = run_resume(capsys, project, "--no-recompute")
    assert code == 2
    assert err == (
        f"ldpbench: error: {RESUME_CELLS} stored cells are stale: postprocessor 'shrink' changed (source); "
        "run without --no-recompute to recompute them (results left unchanged)\n"
    )
    after = {p.name: p.read_bytes() for p in (project / "out").iterdir() if p.is_file()}
    assert after == before
    # Nothing changed: --no-recompute runs as usual.
    (project / "pl" / "shrink.py").write_text(RESUME_PLUGIN.format(factor=1.0, version="1"))
    code, _, err = run_resume(capsys, project, "--no-recompute")
    assert code == 0 and f"(0 run, {RESUME_CELLS} already done)" in err


def test_only_the_cells_of_a_changed_mechanism_rerun(project, capsys):
    # A --plugins-dir oracle subclassing a built-in: editing it reruns its cells only.
    (project / "pl" / "mine.py").write_text(
        "from ldpbench import hookimpl\nfrom ldpbench_plugins.oracles.grr import GRR\n\n\n"
        "class Mine(GRR):\n    name = 'mine'\n\n\n@hookimpl\ndef ldpbench_register_oracles(registry):\n"
        "    registry.register(Mine)\n"
    )
    (project / "spec.yaml").write_text(RESUME_SPEC.replace("[grr, oue]", "[grr, mine]"))
    assert run_resume(capsys, project)[0] == 0
    with open(project / "pl" / "mine.py", "a") as fh:
        fh.write("# a comment is an edit: the source is what is hashed\n")
    code, _, err = run_resume(capsys, project)
    assert code == 0
    assert f"ldpbench: {RESUME_CELLS // 2} cells rerun: oracle 'mine' changed (source)" in err


def test_a_dataset_file_edited_in_place_reruns_its_cells(tmp_path, capsys):
    (tmp_path / "counts.csv").write_text("item,count\n" + "".join(f"{i},{100 - 5 * i}\n" for i in range(16)))
    (tmp_path / "spec.yaml").write_text(
        RESUME_SPEC.replace("- zipf: {d: 16, n: 2000, s: 1.3}", "- histogram: {path: counts.csv}").replace(
            "[base, shrink]", "[base]"
        )
    )
    (tmp_path / "pl").mkdir()
    assert run_resume(capsys, tmp_path)[0] == 0
    (tmp_path / "counts.csv").write_text("item,count\n" + "".join(f"{i},{200 - 5 * i}\n" for i in range(16)))
    code, board, err = run_resume(capsys, tmp_path)
    assert code == 0
    assert f"{RESUME_CELLS} cells ({RESUME_CELLS} run, 0 already done)" in err
    assert f"ldpbench: {RESUME_CELLS} cells rerun: " in err
    assert {r["n"] for r in board} == {sum(200 - 5 * i for i in range(16))}


@pytest.mark.parametrize("bad", ["null", "NaN", "1e999", "-1e999"])
def test_hand_edited_non_finite_rows_are_not_finished_cells(project, capsys, bad):
    assert run_resume(capsys, project)[0] == 0
    path = project / "out" / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    edited = json.dumps({**row, "value": "BAD"}).replace('"BAD"', bad)
    path.write_text(lines[0] + edited + "\n" + "".join(lines[2:]))
    code, board, err = run_resume(capsys, project)
    assert code == 0, err
    assert f"{RESUME_CELLS} cells (1 run, {RESUME_CELLS - 1} already done)" in err
    assert all(math.isfinite(r["mean"]) for r in board)


def test_rows_stored_without_plugin_identities_are_recomputed(project, capsys):
    # Results written before plugin identities were recorded: their code is unknown, so they are
    # not served as today's numbers.
    assert run_resume(capsys, project)[0] == 0
    path = project / "out" / "results.jsonl"
    lines = path.read_text().splitlines()
    stripped = [lines[0]] + [
        # (nor a row checksum: that came later still)
        json.dumps({k: v for k, v in json.loads(line).items() if k not in ("code_fingerprint", "row_crc")})
        for line in lines[1:]
    ]
    path.write_text("\n".join(stripped) + "\n")
    manifest = json.loads((project / "out" / "manifest.json").read_text())
    del manifest["identities"]
    (project / "out" / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run_resume(capsys, project)
    assert code == 0
    assert f"ldpbench: {RESUME_CELLS} cells rerun: stored by an ldpbench that did not record plugin identities" in err


def test_readers_of_a_folder_killed_during_a_stale_rerun_never_mix_versions(project, capsys):
    """Reproduction (issue 28): after a kill -9 during a stale rerun, `leaderboard`, `compare`
    and `report` averaged old- and new-version rows into one mean (0.0032 old, 3.2 new, 1.57
    served). The rerun writes its manifest first; truncating its appends mid-way is the kill."""
    from ldpbench.cli import main

    assert run_resume(capsys, project)[0] == 0
    results = project / "out" / "results.jsonl"
    old_size = results.stat().st_size
    (project / "pl" / "shrink.py").write_text(RESUME_PLUGIN.format(factor=1000.0, version="1"))
    assert run_resume(capsys, project)[0] == 0
    new = results.read_bytes()
    half = new.index(b"\n", old_size + (len(new) - old_size) // 2) + 1
    results.write_bytes(new[:half])  # the rerun killed half way through its appends
    (project / "out" / "leaderboard.json").unlink()

    new_rows = [json.loads(line) for line in new[old_size:half].splitlines() if line.strip()]

    capsys.readouterr()
    assert main(["leaderboard", str(project / "out"), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "other code or data produced" in err
    served = [r for r in json.loads(out) if r["pipeline"] == "shrink"]
    assert served
    for row in served:
        # Only rows of the new version are served: as many repeats as the rerun stored.
        mine = [
            r["value"]
            for r in new_rows
            if (r["pipeline"], r["oracle"], r["epsilon"]) == ("shrink", row["oracle"], row["epsilon"])
        ]
        assert row["repeats"] == len(mine)
        if mine:
            assert row["mean"] == pytest.approx(sum(mine) / len(mine))
    for reader in (
        ["compare", str(project / "out"), str(project / "out")],
        ["report", str(project / "out"), "--out", str(project / "rep")],
    ):
        assert main(reader) == 0
        assert "other code or data produced" in capsys.readouterr().err
