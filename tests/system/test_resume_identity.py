"""Resume never serves stale numbers (issue 10).

Reproduction on the code before the fix: run a spec, edit a plugin (even bumping its
``algorithm_version``), run again into the same folder: ``12 cells (0 run, 12 already done)`` and
the old numbers. The same for a dataset file edited in place, and for result rows edited by hand
to NaN or infinity (they counted as finished cells).
"""

from __future__ import annotations

import json
import math

import pytest

from ldpbench.cli import main

PLUGIN = '''\
from ldpbench import hookimpl
from ldpbench.types import PostProcessor

FACTOR = {factor}


class Shrink(PostProcessor):
    """Scales the estimate by FACTOR."""

    name = "shrink"
    algorithm_version = "{version}"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.frequencies * FACTOR)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Shrink)
'''

SPEC = """\
name: resume
seed: 3
repeats: 3
datasets:
  - zipf: {d: 16, n: 2000, s: 1.3}
epsilons: [1, 2]
oracles: [grr, oue]
pipelines: [base, shrink]
metrics: [mse]
"""
CELLS = 2 * 2 * 3


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pl").mkdir()
    (tmp_path / "pl" / "shrink.py").write_text(PLUGIN.format(factor=1.0, version="1"))
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def run(capsys, project, *extra):
    capsys.readouterr()
    code = main(
        [
            "run",
            str(project / "spec.yaml"),
            "--out",
            str(project / "out"),
            "--workers",
            "1",
            "--plugins-dir",
            str(project / "pl"),
            "--no-progress",
            "--format",
            "json",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def shrink_means(board):
    return sorted(r["mean"] for r in board if r["pipeline"] == "shrink")


@pytest.mark.slow
@pytest.mark.parametrize(("version", "why"), [("1", "(source)"), ("2", "(algorithm_version 1 -> 2, source)")])
def test_an_edited_plugin_reruns_its_cells_and_says_why(project, capsys, version, why):
    code, first, _ = run(capsys, project)
    assert code == 0
    (project / "pl" / "shrink.py").write_text(PLUGIN.format(factor=2.0, version=version))
    code, second, err = run(capsys, project)
    assert code == 0
    assert f"ldpbench: {CELLS} cells rerun: postprocessor 'shrink' changed {why}" in err
    assert f"{CELLS} cells ({CELLS} run, 0 already done)" in err
    # The new numbers, not the stored ones: scaling by 2 makes every mse larger.
    assert all(b > a for a, b in zip(shrink_means(first), shrink_means(second)))
    # The rerun is now current: a third run reuses everything.
    code, third, err = run(capsys, project)
    assert code == 0 and f"{CELLS} cells (0 run, {CELLS} already done)" in err and "cells rerun" not in err
    assert third == second


@pytest.mark.slow
def test_no_recompute_refuses_stale_cells_and_leaves_the_folder_alone(project, capsys):
    assert run(capsys, project)[0] == 0
    before = {p.name: p.read_bytes() for p in (project / "out").iterdir() if p.is_file()}
    (project / "pl" / "shrink.py").write_text(PLUGIN.format(factor=2.0, version="1"))
    code, _, err = run(capsys, project, "--no-recompute")
    assert code == 2
    assert err == (
        f"ldpbench: error: {CELLS} stored cells are stale: postprocessor 'shrink' changed (source); "
        "run without --no-recompute to recompute them (results left unchanged)\n"
    )
    after = {p.name: p.read_bytes() for p in (project / "out").iterdir() if p.is_file()}
    assert after == before
    # Nothing changed: --no-recompute runs as usual.
    (project / "pl" / "shrink.py").write_text(PLUGIN.format(factor=1.0, version="1"))
    code, _, err = run(capsys, project, "--no-recompute")
    assert code == 0 and f"(0 run, {CELLS} already done)" in err


@pytest.mark.slow
def test_only_the_cells_of_a_changed_mechanism_rerun(project, capsys):
    # A --plugins-dir oracle subclassing a built-in: editing it reruns its cells only.
    (project / "pl" / "mine.py").write_text(
        "from ldpbench import hookimpl\nfrom ldpbench_plugins.oracles.grr import GRR\n\n\n"
        "class Mine(GRR):\n    name = 'mine'\n\n\n@hookimpl\ndef ldpbench_register_oracles(registry):\n"
        "    registry.register(Mine)\n"
    )
    (project / "spec.yaml").write_text(SPEC.replace("[grr, oue]", "[grr, mine]"))
    assert run(capsys, project)[0] == 0
    with open(project / "pl" / "mine.py", "a") as fh:
        fh.write("# a comment is an edit: the source is what is hashed\n")
    code, _, err = run(capsys, project)
    assert code == 0
    assert f"ldpbench: {CELLS // 2} cells rerun: oracle 'mine' changed (source)" in err


@pytest.mark.slow
def test_a_dataset_file_edited_in_place_reruns_its_cells(tmp_path, capsys):
    (tmp_path / "counts.csv").write_text("item,count\n" + "".join(f"{i},{100 - 5 * i}\n" for i in range(16)))
    (tmp_path / "spec.yaml").write_text(
        SPEC.replace("- zipf: {d: 16, n: 2000, s: 1.3}", "- histogram: {path: counts.csv}").replace(
            "[base, shrink]", "[base]"
        )
    )
    (tmp_path / "pl").mkdir()
    assert run(capsys, tmp_path)[0] == 0
    (tmp_path / "counts.csv").write_text("item,count\n" + "".join(f"{i},{200 - 5 * i}\n" for i in range(16)))
    code, board, err = run(capsys, tmp_path)
    assert code == 0
    assert f"{CELLS} cells ({CELLS} run, 0 already done)" in err
    assert f"ldpbench: {CELLS} cells rerun: " in err
    assert {r["n"] for r in board} == {sum(200 - 5 * i for i in range(16))}


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["null", "NaN", "1e999", "-1e999"])
def test_hand_edited_non_finite_rows_are_not_finished_cells(project, capsys, bad):
    assert run(capsys, project)[0] == 0
    path = project / "out" / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    edited = json.dumps({**row, "value": "BAD"}).replace('"BAD"', bad)
    path.write_text(lines[0] + edited + "\n" + "".join(lines[2:]))
    code, board, err = run(capsys, project)
    assert code == 0, err
    assert f"{CELLS} cells (1 run, {CELLS - 1} already done)" in err
    assert all(math.isfinite(r["mean"]) for r in board)


@pytest.mark.slow
def test_rows_stored_without_plugin_identities_are_recomputed(project, capsys):
    # Results written before plugin identities were recorded: their code is unknown, so they are
    # not served as today's numbers.
    assert run(capsys, project)[0] == 0
    path = project / "out" / "results.jsonl"
    lines = path.read_text().splitlines()
    stripped = [lines[0]] + [
        json.dumps({k: v for k, v in json.loads(line).items() if k != "code_fingerprint"}) for line in lines[1:]
    ]
    path.write_text("\n".join(stripped) + "\n")
    manifest = json.loads((project / "out" / "manifest.json").read_text())
    del manifest["identities"]
    (project / "out" / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run(capsys, project)
    assert code == 0
    assert f"ldpbench: {CELLS} cells rerun: stored by an ldpbench that did not record plugin identities" in err


def test_an_edited_core_reruns_every_cell_and_says_why(project, capsys, monkeypatch, tmp_path):
    # The engine's own code shapes the numbers as much as a plugin's: a core module edited in a
    # checkout (whose version does not move) must make every stored cell stale. A stand-in
    # module joins the hashed core, and is edited between the runs.
    from ldpbench.loading import identity

    (tmp_path / "core_standin.py").write_text("SCALE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    core = identity.core_modules()
    monkeypatch.setattr(identity, "core_modules", lambda: [*core, "core_standin"])
    identity.core_identity.cache_clear()
    try:
        assert run(capsys, project)[0] == 0
        manifest = json.loads((project / "out" / "manifest.json").read_text())
        assert manifest["identities"][identity.CORE_KEY]["source_hash"] == identity.core_identity().source_hash
        (tmp_path / "core_standin.py").write_text("SCALE = 2  # an edit\n")
        identity.core_identity.cache_clear()  # a new process reads the edited file
        code, _, err = run(capsys, project, "--no-recompute")
        assert code == 2 and f"{CELLS} stored cells are stale: core 'ldpbench' changed (source)" in err
        code, _, err = run(capsys, project)
        assert code == 0
        assert f"ldpbench: {CELLS} cells rerun: core 'ldpbench' changed (source)" in err
        assert f"{CELLS} cells ({CELLS} run, 0 already done)" in err
    finally:
        identity.core_identity.cache_clear()
