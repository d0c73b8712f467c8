"""A plugin that raises fails only its own cells (issue 7, hardening).

``tests/system/test_run_cli.py`` checks the exit code 3 and the leaderboard JSON of a post-processor
that always raises. This adds what it leaves out, with a post-processor that raises in some cells
only (at epsilon 4, not at epsilon 1):

- the error text is stored with each failed result row in ``results.jsonl`` (and nowhere else);
- the leaderboard marks the failure in every format people read (table, Markdown) and in JSON;
- every other row keeps exactly the numbers of a run without the failing plugin (bit for bit);
- a rerun retries the failed cells only (they are not "done"), and still exits 3.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import textwrap

import pytest
from support import cli

PLUGIN = '''\
"""A post-processor that cannot handle large budgets (a deliberately fragile third-party plugin)."""

from ldpbench import hookimpl
from ldpbench.types import PostProcessor


class Fragile(PostProcessor):
    """Returns the estimate unchanged, but raises at epsilon >= 4."""

    name = "fragile"

    def apply(self, estimate, rng):
        if estimate.epsilon >= 4:
            raise ValueError(f"fragile cannot handle epsilon {estimate.epsilon:g}")
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Fragile)
'''

SPEC = """\
name: fragile-run
seed: 99
repeats: 3
datasets:
  - zipf: {d: 32, n: 5000, s: 1.2}
epsilons: [1, 4]
oracles: [grr, oue]
pipelines: [base, norm-sub, fragile]
metrics: [mse, l1]
"""
ERROR = "pipeline 'fragile': ValueError: fragile cannot handle epsilon 4"
CELLS = 2 * 2 * 3  # epsilons x oracles x repeats
FAILED_CELLS = 1 * 2 * 3  # the epsilon-4 cells
COMMON = ("--format", "json", "--workers", "1", "--plugins-dir", "plugs", "--no-progress")


def _stored_rows(directory):
    lines = (directory / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The failing run (the real command, in a subprocess) in ROOT/failing; its folder."""
    root = tmp_path_factory.mktemp("fragile")
    (root / "plugs").mkdir()
    (root / "plugs" / "fragile.py").write_text(PLUGIN)
    (root / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (root / "clean.yaml").write_text(textwrap.dedent(SPEC).replace(", fragile]", "]"))
    failing = subprocess.run(
        [sys.executable, "-m", "ldpbench", "run", "spec.yaml", "--out", "failing", *COMMON],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return root, failing


def test_exit_code_3_and_the_error_on_stderr(runs):
    _, failing = runs
    assert failing.returncode == 3, failing.stderr
    assert ERROR in failing.stderr and "Traceback" not in failing.stderr
    assert f"{FAILED_CELLS * 2} result rows failed" in failing.stderr  # 6 cells x 2 metrics


def test_the_error_is_stored_with_each_failed_row_only(runs):
    root = runs[0]
    rows = _stored_rows(root / "failing")
    assert len(rows) == CELLS * 3 * 2
    failed = [r for r in rows if r["error"] is not None]
    assert {(r["pipeline"], r["epsilon"]) for r in failed} == {("fragile", 4.0)}
    assert len(failed) == FAILED_CELLS * 2
    assert all(r["error"] == ERROR and r["value"] is None for r in failed)
    ok = [r for r in rows if r["error"] is None]
    assert all(math.isfinite(r["value"]) for r in ok)


def test_the_leaderboard_marks_the_failure(runs, capsys):
    root, failing = runs
    board = json.loads(failing.stdout)
    marked = [r for r in board if r["failed"]]
    assert {(r["pipeline"], r["epsilon"]) for r in marked} == {("fragile", 4.0)}
    assert all(r["failed"] == 3 and r["repeats"] == 0 and r["mean"] is None and r["error"] == ERROR for r in marked)
    assert not any(r["best"] for r in marked)

    code, md, err = cli(capsys, "leaderboard", root / "failing", "--format", "markdown")
    assert code == 0, err
    fragile_lines = [line for line in md.splitlines() if "| fragile" in line]
    assert len(fragile_lines) == 2 * 2  # (grr, oue) x (mse, l1)
    for line in fragile_lines:
        eps1, eps4 = [c.strip() for c in line.strip("|").split("|")][2:4]
        assert eps4 == "failed (3)"
        assert "±" in eps1  # the epsilon-1 cells of the same pipeline succeeded
    code, table, err = cli(capsys, "leaderboard", root / "failing")
    assert code == 0 and table.count("failed (3)") == 4, err


def test_other_rows_keep_the_numbers_of_a_run_without_the_plugin(runs, capsys):
    root = runs[0]
    code, _, err = cli(
        capsys,
        "run",
        root / "clean.yaml",
        "--out",
        root / "clean",
        *COMMON[:-3],
        "--plugins-dir",
        root / "plugs",
        "--no-progress",
    )
    assert code == 0, err
    key = lambda r: (r["cell_id"], r["oracle"], r["pipeline"], r["metric"])  # noqa: E731
    failing = {key(r): r["value"] for r in _stored_rows(root / "failing")}
    clean = {key(r): r["value"] for r in _stored_rows(root / "clean")}
    assert len(clean) == CELLS * 2 * 2
    # Same cells (same ids: the pipeline list is not part of a cell's identity), same values.
    assert {k: failing[k] for k in clean} == clean
    # At epsilon 1 the fragile pipeline is the identity: its rows equal base's, exactly.
    same = [(v, failing[(c, o, "base", m)]) for (c, o, p, m), v in failing.items() if p == "fragile" and v is not None]
    assert len(same) == (CELLS - FAILED_CELLS) * 2 and all(a == b for a, b in same)


def test_a_rerun_retries_only_the_failed_cells(runs, capsys):
    root = runs[0]
    shutil.copytree(root / "failing", root / "retry")  # leave the first run's files as they are
    code, _, err = cli(
        capsys,
        "run",
        root / "spec.yaml",
        "--out",
        root / "retry",
        *COMMON[:-3],
        "--plugins-dir",
        root / "plugs",
        "--no-progress",
    )
    assert code == 3, err
    assert f"{FAILED_CELLS} run, {CELLS - FAILED_CELLS} already done" in err
