"""End to end: run the real ``ldpbench compare`` on hand-made leaderboards; check lines and exit codes."""

from __future__ import annotations

import json

import pytest
from support import leaderboard_row, run_ldpbench, write_json

BASELINE = [
    leaderboard_row("grr", 1.0),
    leaderboard_row("oue", 2.0),
    leaderboard_row("olh", 0.5, metric="ndcg@10", gib=True),
]


def test_identical_leaderboards_exit_0(tmp_path):
    write_json(tmp_path, "base.json", BASELINE)
    out = run_ldpbench(tmp_path, "compare", "base.json", "base.json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # The verdict says how large a change the gate could see: max(5%, 5 * sqrt(2) * 0.01 / mean).
    assert lines[0] == (
        "**OK**: 3 unchanged (threshold 5% (default); noise z = 5); detectable change: median 7.1% of "
        "the baseline mean, 5.0% to 14% over 3 rows"
    )
    assert lines[2].split("|")[1:4] == ["    ", " dataset   ", " ε   "]
    assert len(lines) == 2 + 2 + 3


def test_a_deliberate_regression_exits_1_with_its_markdown_row(tmp_path):
    write_json(tmp_path, "base.json", BASELINE)
    current = [
        leaderboard_row("grr", 1.3),
        leaderboard_row("oue", 1.0),
        leaderboard_row("olh", 0.5, metric="ndcg@10", gib=True),
    ]
    write_json(tmp_path, "cur.json", current)
    out = run_ldpbench(tmp_path, "compare", "base.json", "cur.json", "--threshold", "mse:10%", "--only-changed")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(
        "**REGRESSION**: 1 worse, 1 better, 1 unchanged (threshold 5% (default), mse 10%; noise z = 5); "
        "detectable change: median 10% of the baseline mean"
    )
    # the table starts after the headline and its notes (a row better beyond noise gets one)
    top = next(i for i, line in enumerate(lines) if line.startswith("|"))
    cells = [c.strip() for c in lines[top + 2].split("|")[1:-1]]
    assert cells == [
        "+",
        "zipf",
        "1",
        "grr",
        "base",
        "mse",
        "1 ± 0.01",
        "1.3 ± 0.01",
        "+30.0%",
        "±10%",  # the 10% threshold is above the 5σ noise (7.1%)
        "worse: beyond 10% and 5σ noise (0.071)",
    ]
    assert lines[top + 3].startswith("| -  | zipf      | 1   | oue      |")
    assert len(lines) == top + 4  # --only-changed: the unchanged olh row is left out


def test_a_noise_only_difference_exits_0_unless_z_is_lowered(tmp_path):
    write_json(tmp_path, "base.json", [leaderboard_row("grr", 1.0, stderr=0.05)])
    write_json(tmp_path, "cur.json", [leaderboard_row("grr", 1.15, stderr=0.05)])  # +15%, but only 2.1 σ
    out = run_ldpbench(tmp_path, "compare", "base.json", "cur.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "unchanged: within 5σ noise (0.35)" in out.stdout
    strict = run_ldpbench(tmp_path, "compare", "base.json", "cur.json", "--z", "2", "--format", "table")
    assert strict.returncode == 1
    assert strict.stdout.startswith("REGRESSION: 1 worse")


def test_more_failed_repeats_exit_1(tmp_path):
    # 1 of 20 repeats failed in the baseline, all 20 now: no successful repeat is left to compare,
    # but the row got worse all the same.
    write_json(tmp_path, "base.json", [leaderboard_row("grr", 1.0, failed=1, repeats=19, error="RuntimeError: boom")])
    write_json(
        tmp_path,
        "cur.json",
        [leaderboard_row("grr", None, stderr=None, failed=20, repeats=0, error="RuntimeError: boom")],
    )
    out = run_ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "table")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.startswith("REGRESSION: 1 with more failures")
    assert "more failures: 20 of 20 repeats fail, 1 of 20 in the baseline: RuntimeError: boom" in out.stdout


def test_an_emptied_leaderboard_exits_1_unless_missing_rows_are_allowed(tmp_path):
    write_json(tmp_path, "base.json", BASELINE)
    write_json(tmp_path, "empty.json", [])
    out = run_ldpbench(tmp_path, "compare", "base.json", "empty.json", "--only-changed")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.startswith("**REGRESSION**: 3 missing")
    assert out.stdout.count("| ?  |") == 3
    allowed = run_ldpbench(tmp_path, "compare", "base.json", "empty.json", "--allow-missing")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert allowed.stdout.startswith("**OK**: 3 missing") and "missing rows allowed" in allowed.stdout
    # New rows (only in the current leaderboard) never fail the gate.
    grown = run_ldpbench(tmp_path, "compare", "empty.json", "base.json")
    assert grown.returncode == 0 and grown.stdout.startswith("**OK**: 3 new")


def test_results_directories_are_aggregated(tmp_path):
    for name, shift in (("a", 0.0), ("b", 1.0)):
        lines = [json.dumps({"schema_version": 1, "kind": "ldpbench-results"})]
        for rep, v in enumerate((1.0, 1.1, 0.9, 1.0)):
            lines.append(
                json.dumps(
                    dict(
                        cell_id=f"c{rep}",
                        dataset="zipf",
                        users="",
                        epsilon=2.0,
                        oracle="grr",
                        pipeline="norm-sub",
                        metric="mse",
                        greater_is_better=False,
                        repeat=rep,
                        value=v + shift,
                        error=None,
                        simulation="aggregate",
                        n=100,
                        d=8,
                        fingerprint="f1",
                        elapsed=0.0,
                    )
                )
            )
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert run_ldpbench(tmp_path, "compare", "a", "a").returncode == 0
    out = run_ldpbench(tmp_path, "compare", "a", "b")
    assert out.returncode == 1 and "| +  | zipf" in out.stdout and "+100.0%" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["base.json", "base.json", "--threshold", "mse:five%"], "bad threshold 'mse:five%'"),
        (
            ["base.json", "base.json", "--threshold", "mes:1%"],
            "--threshold names a metric in neither leaderboard: 'mes' (did you mean 'mse'?)",
        ),
        (["base.json", "missing.json"], "current missing.json: no such file or directory"),
        (["bad.json", "base.json"], "baseline bad.json: not valid JSON"),
        (
            ["newer.json", "base.json"],
            "baseline newer.json: leaderboard has schema version 99, newer than the version 1 this ldpbench "
            "reads (written by a newer ldpbench): update ldpbench",
        ),
        (
            ["base.json", "older.json"],
            "current older.json: leaderboard has schema version 0, older than the version 1 this ldpbench "
            "reads (written by an older ldpbench); no automatic migration exists for it: regenerate it",
        ),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(tmp_path, args, message):
    write_json(tmp_path, "base.json", BASELINE)
    (tmp_path / "bad.json").write_text("[{")
    write_json(tmp_path, "newer.json", [{"schema_version": 99, **r} for r in BASELINE])
    write_json(tmp_path, "older.json", [{"schema_version": 0, **r} for r in BASELINE])
    out = run_ldpbench(tmp_path, "compare", *args)
    assert out.returncode == 2
    assert out.stderr.startswith("ldpbench: error: ") and message in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
