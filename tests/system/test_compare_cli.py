"""End to end: run the real ``ldpbench compare`` on hand-made leaderboards; check lines and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ldpbench(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "ldpbench", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def lb_row(oracle, mean, stderr=0.01, metric="mse", gib=False, failed=0, repeats=10, fingerprint="f1", error=None):
    return dict(
        dataset="zipf",
        users="",
        epsilon=1.0,
        oracle=oracle,
        pipeline="base",
        metric=metric,
        greater_is_better=gib,
        mean=mean,
        stderr=stderr,
        ci_low=None,
        ci_high=None,
        repeats=repeats,
        failed=failed,
        best=False,
        fingerprint=fingerprint,
        error=error,
    )


BASELINE = [lb_row("grr", 1.0), lb_row("oue", 2.0), lb_row("olh", 0.5, metric="ndcg@10", gib=True)]


def write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return name


@pytest.mark.slow
def test_identical_leaderboards_exit_0(tmp_path):
    write(tmp_path, "base.json", BASELINE)
    out = ldpbench(tmp_path, "compare", "base.json", "base.json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "**OK**: 3 unchanged (threshold 5% (default); noise z = 5)"
    assert lines[2].split("|")[1:4] == ["    ", " dataset   ", " ε   "]
    assert len(lines) == 2 + 2 + 3


@pytest.mark.slow
def test_a_deliberate_regression_exits_1_with_its_markdown_row(tmp_path):
    write(tmp_path, "base.json", BASELINE)
    current = [lb_row("grr", 1.3), lb_row("oue", 1.0), lb_row("olh", 0.5, metric="ndcg@10", gib=True)]
    write(tmp_path, "cur.json", current)
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--threshold", "mse:10%", "--only-changed")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("**REGRESSION**: 1 worse, 1 better, 1 unchanged (threshold 5% (default), mse 10%; noise z = 5)")
    cells = [c.strip() for c in lines[4].split("|")[1:-1]]
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
        "worse: beyond 10% and 5σ noise (0.071)",
    ]
    assert lines[5].startswith("| -  | zipf      | 1   | oue      |")
    assert len(lines) == 6  # --only-changed: the unchanged olh row is left out


@pytest.mark.slow
def test_a_noise_only_difference_exits_0_unless_z_is_lowered(tmp_path):
    write(tmp_path, "base.json", [lb_row("grr", 1.0, stderr=0.05)])
    write(tmp_path, "cur.json", [lb_row("grr", 1.15, stderr=0.05)])  # +15%, but only 2.1 σ
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "unchanged: within 5σ noise (0.35)" in out.stdout
    strict = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--z", "2", "--format", "table")
    assert strict.returncode == 1
    assert strict.stdout.startswith("REGRESSION: 1 worse")


def test_newly_failing_and_not_comparable_rows(tmp_path):
    write(tmp_path, "base.json", BASELINE)
    current = [
        lb_row("grr", 1.0, failed=1, repeats=9, error="ValueError: domain too small"),
        lb_row("oue", 9.0, fingerprint="f2"),
        lb_row("olh", 0.5, metric="ndcg@10", gib=True),
    ]
    write(tmp_path, "cur.json", current)
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert [(r["oracle"], r["mark"], r["status"]) for r in doc["rows"]] == [
        ("grr", "!", "failing"),
        ("oue", "x", "not comparable"),
        ("olh", "", "unchanged"),
    ]
    assert "ValueError: domain too small" in doc["rows"][0]["reason"]


@pytest.mark.slow
def test_more_failed_repeats_exit_1(tmp_path):
    # 1 of 20 repeats failed in the baseline, all 20 now: no successful repeat is left to compare,
    # but the row got worse all the same.
    write(tmp_path, "base.json", [lb_row("grr", 1.0, failed=1, repeats=19, error="RuntimeError: boom")])
    write(tmp_path, "cur.json", [lb_row("grr", None, stderr=None, failed=20, repeats=0, error="RuntimeError: boom")])
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "table")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.startswith("REGRESSION: 1 with more failures")
    assert "more failures: 20 of 20 repeats fail, 1 of 20 in the baseline: RuntimeError: boom" in out.stdout


@pytest.mark.slow
def test_an_emptied_leaderboard_exits_1_unless_missing_rows_are_allowed(tmp_path):
    write(tmp_path, "base.json", BASELINE)
    write(tmp_path, "empty.json", [])
    out = ldpbench(tmp_path, "compare", "base.json", "empty.json", "--only-changed")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.startswith("**REGRESSION**: 3 missing")
    assert out.stdout.count("| ?  |") == 3
    allowed = ldpbench(tmp_path, "compare", "base.json", "empty.json", "--allow-missing")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert allowed.stdout.startswith("**OK**: 3 missing") and "missing rows allowed" in allowed.stdout
    # New rows (only in the current leaderboard) never fail the gate.
    grown = ldpbench(tmp_path, "compare", "empty.json", "base.json")
    assert grown.returncode == 0 and grown.stdout.startswith("**OK**: 3 new")


@pytest.mark.slow
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
    assert ldpbench(tmp_path, "compare", "a", "a").returncode == 0
    out = ldpbench(tmp_path, "compare", "a", "b")
    assert out.returncode == 1 and "| +  | zipf" in out.stdout and "+100.0%" in out.stdout


@pytest.mark.slow
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
    write(tmp_path, "base.json", BASELINE)
    (tmp_path / "bad.json").write_text("[{")
    write(tmp_path, "newer.json", [{"schema_version": 99, **r} for r in BASELINE])
    write(tmp_path, "older.json", [{"schema_version": 0, **r} for r in BASELINE])
    out = ldpbench(tmp_path, "compare", *args)
    assert out.returncode == 2
    assert out.stderr.startswith("ldpbench: error: ") and message in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
