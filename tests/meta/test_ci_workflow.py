"""The GitHub Actions example (docs/ci/github-actions.yml): valid YAML, and a summary in every case.

GitHub skips a step after a failed one unless its ``if:`` holds a status function (``always()``,
``!cancelled()``, ``failure()``). The leaderboard step fails (exit 3) exactly when a plugin raised,
so without one the compare step — the one writing the job summary — never showed plugin failures.
The compare step's script is then run with a stand-in ``ldpbench`` to check what reaches the
summary and that the step's exit status is compare's.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / "docs" / "ci" / "github-actions.yml"


@pytest.fixture(scope="module")
def steps():
    doc = yaml.safe_load(WORKFLOW.read_text())
    steps = doc["jobs"]["leaderboard"]["steps"]
    return {step.get("id") or step.get("name"): step for step in steps}


def test_the_compare_step_runs_after_a_failed_leaderboard_step(steps):
    leaderboard = steps["leaderboard"]
    assert "run_ci_leaderboard.sh" in leaderboard["run"]
    compare = steps["Compare with the committed baseline"]
    condition = compare.get("if", "")
    assert "!cancelled()" in condition or "always()" in condition, condition
    assert "steps.leaderboard.outcome" in str(compare.get("env", {})) + condition
    # The uploaded artifact does not depend on either step passing.
    assert steps["Upload the results"]["if"] == "always()"


@pytest.mark.parametrize("outcome, compare_status", [("failure", 1), ("success", 0), ("success", 2)])
def test_the_summary_is_written_and_the_step_exits_with_compare(steps, tmp_path, outcome, compare_status):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ldpbench"
    fake.write_text(
        "#!/bin/sh\n"
        'echo "**REGRESSION**: 1 newly failing (threshold 5% (default); noise z = 5)"\n'
        f'[ {compare_status} = 2 ] && echo "ldpbench: error: current results/ci/leaderboard.json: no such file" >&2\n'
        f"exit {compare_status}\n"
    )
    fake.chmod(0o755)
    summary = tmp_path / "summary.md"
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        GITHUB_STEP_SUMMARY=str(summary),
        LEADERBOARD_OUTCOME=outcome,
    )
    step = steps["Compare with the committed baseline"]
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == compare_status, proc.stderr
    text = summary.read_text()
    assert text.startswith("## ldpbench leaderboard vs reports/ci-baseline")
    assert "**REGRESSION**: 1 newly failing" in text
    assert ("**The leaderboard run failed**" in text) == (outcome == "failure")
    assert ("no such file" in text) == (compare_status == 2)
