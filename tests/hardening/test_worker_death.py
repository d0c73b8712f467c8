"""A pool worker that dies fails only the cell it was running (issue 7, hardening).

A plugin that calls ``os._exit`` or is killed by the kernel (a segfault, the OOM killer) takes its
worker process with it; ``concurrent.futures`` then breaks the whole pool and fails every cell in
flight. ``ldpbench run`` used to abort with a traceback and exit 4 ("a bug in ldpbench"). Now:

- the cells whose process died are stored as failed rows whose error says how it died, and every
  other cell — the bystanders in flight on the broken pool included — is stored with its numbers;
- the run completes and exits 3, like a plugin that raised;
- a rerun retries only the failed cells and ends with the leaderboard of a run that never crashed.

The third-party plugin below kills its worker in the epsilon-4 cells while ``DIE`` is set: with
SIGTERM under GRR, with SIGKILL (what the OOM killer sends) under OUE. (A plugin calling
``os._exit`` no longer kills its worker: the cell guard turns it into a failed cell, see
test_fuzz_plugin_faults.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ldpbench.results.store import ResultsStore

PLUGIN = '''\
"""A post-processor whose process dies at epsilon 4 while DIE is set."""

import os
import signal

from ldpbench import hookimpl
from ldpbench.types import PostProcessor


class Crash(PostProcessor):
    """Returns the estimate unchanged, but kills its own process at epsilon 4 while DIE is set."""

    name = "crash"

    def apply(self, estimate, rng):
        if os.environ.get("DIE") and estimate.epsilon == 4:
            if estimate.mechanism == "grr":
                os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGKILL)
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Crash)
'''

SPEC = """\
name: crashing
seed: 5
repeats: 3
datasets:
  - zipf: {d: 16, n: 3000, s: 1.2}
epsilons: [1, 2, 4]
oracles: [grr, oue]
pipelines: [base, crash]
metrics: [mse, l1]
"""
CELLS = 3 * 2 * 3
DEAD_CELLS = 2 * 3  # epsilon 4, both oracles, every repeat


def _run(root, out, *extra, die=False):
    env = {k: v for k, v in os.environ.items() if k != "DIE"} | ({"DIE": "1"} if die else {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ldpbench",
            "run",
            "spec.yaml",
            "--out",
            out,
            "--format",
            "json",
            "--plugins-dir",
            "plugs",
            "--no-progress",
            *extra,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    root = tmp_path_factory.mktemp("crash")
    (root / "plugs").mkdir()
    (root / "plugs" / "crash.py").write_text(PLUGIN)
    (root / "spec.yaml").write_text(textwrap.dedent(SPEC))
    return root, _run(root, "crashed", "--workers", "2", die=True)


def test_the_run_completes_with_exit_3_and_says_how_the_worker_died(crashed):
    _, proc = crashed
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and "bug in ldpbench" not in proc.stderr
    assert f"{CELLS} cells ({CELLS} run, 0 already done)" in proc.stderr
    assert "worker process died (killed by signal 15 (SIGTERM))" in proc.stderr
    assert "worker process died (killed by signal 9 (SIGKILL))" in proc.stderr
    board = json.loads(proc.stdout)
    for row in board:
        assert row["failed"] == (3 if row["epsilon"] == 4 else 0), row
        assert row["repeats"] == (0 if row["epsilon"] == 4 else 3), row


def test_only_the_dead_cells_fail_and_each_keeps_its_rows_identity(crashed):
    root, _ = crashed
    df = ResultsStore(root / "crashed").load()
    assert df["cell_id"].n_unique() == CELLS and df.height == CELLS * 2 * 2
    failed = df.filter(df["error"].is_not_null())
    assert failed["cell_id"].n_unique() == DEAD_CELLS and set(failed["epsilon"]) == {4.0}
    errors = dict(zip(failed["oracle"], failed["error"]))
    assert errors == {
        "grr": "worker process died (killed by signal 15 (SIGTERM))",
        "oue": "worker process died (killed by signal 9 (SIGKILL))",
    }
    # The bystanders in flight when the pool broke were rerun, not failed.
    assert df.filter(df["epsilon"] != 4)["error"].null_count() == (CELLS - DEAD_CELLS) * 2 * 2

    # Resume without the crash: only the dead cells run, and their rows replace the failed ones
    # under the same labels and fingerprints.
    resumed = _run(root, "crashed", "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{DEAD_CELLS} run, {CELLS - DEAD_CELLS} already done" in resumed.stderr
    key = ["cell_id", "oracle", "pipeline", "metric"]
    redone = ResultsStore(root / "crashed").load()
    assert redone["error"].null_count() == redone.height
    before = failed.select(
        *key, "dataset", "users", "epsilon", "repeat", "simulation", "fingerprint", "greater_is_better"
    ).sort(key)
    after = redone.filter(redone["cell_id"].is_in(failed["cell_id"].unique().to_list()))
    assert before.equals(after.select(before.columns).sort(key))

    # The resumed leaderboard is that of a run that never crashed (in-process: no pool at all).
    clean = _run(root, "clean", "--workers", "1")
    assert clean.returncode == 0, clean.stderr
    assert json.loads(resumed.stdout) == json.loads(clean.stdout)
    a = ResultsStore(root / "crashed").load().drop("elapsed").sort(key)
    b = ResultsStore(root / "clean").load().drop("elapsed").sort(key)
    assert a.equals(b)
