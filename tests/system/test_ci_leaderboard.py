"""Our own CI gate: the CI leaderboard must not regress against the committed baseline.

This is the check docs/ci.md offers third-party plugin repositories (the ``ldpbench_leaderboard``
fixture of our pytest plugin), run on ldpbench itself. A change that moves the numbers on purpose
regenerates the baseline in the same commit: ``scripts/update_ci_baseline.sh``.
"""

from __future__ import annotations

CI_SPECS = ["specs/ci.yaml", "specs/ci-em.yaml", "specs/ci-blender.yaml"]


BASELINE = "reports/ci-baseline/leaderboard.json"


def test_the_ci_leaderboard_has_not_regressed(ldpbench_leaderboard):
    result = ldpbench_leaderboard(CI_SPECS, BASELINE, workers=2)  # fails the test on a regression
    # Every baseline row is found again and comparable (a renamed pipeline or metric, or a changed
    # plugin version, would leave the gate blind): refresh the baseline in the same commit.
    counts = result.comparison.counts()
    assert counts["unchanged"] + counts.get("better", 0) == len(result.comparison.changes), counts
