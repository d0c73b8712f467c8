"""End to end: ``ldpbench leaderboard RESULTS_DIR`` on a hand-made results.jsonl."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ldpbench(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "ldpbench", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


HEADER = {"schema_version": 1, "kind": "ldpbench-results"}


def row(rep, oracle, eps, value, pipeline="base", error=None):
    return dict(
        cell_id=f"{oracle}-{eps}-{rep}",
        dataset="zipf",
        users="",
        epsilon=eps,
        oracle=oracle,
        pipeline=pipeline,
        metric="mse",
        greater_is_better=False,
        repeat=rep,
        value=value,
        error=error,
        simulation="aggregate",
        n=1000,
        d=16,
        fingerprint="f1",
        elapsed=0.01,
    )


@pytest.fixture
def run_dir(tmp_path):
    rows = []
    for rep in range(3):
        for eps in (1.0, 4.0):
            rows.append(row(rep, "oue", eps, 0.01 / eps + rep * 1e-4))
            rows.append(row(rep, "grr", eps, 0.02 / eps + rep * 1e-4))
    rows.append(row(3, "grr", 1.0, None, error="ValueError: boom"))
    path = tmp_path / "results" / "quickstart"
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in [HEADER, *rows]) + "\n")
    return path


def test_table_is_the_default(run_dir, tmp_path):
    out = ldpbench(tmp_path, "leaderboard", str(run_dir))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "zipf · mse (lower is better)"
    assert lines[2].split() == ["oracle", "pipeline", "ε=1", "ε=4"]
    assert lines[4].split() == ["oue", "base", "0.0101", "±", "5.8e-05", "*", "0.0026", "±", "5.8e-05", "*"]
    # 3 repeats cannot show a difference: no ≈ (that would be a verdict), the reason instead
    assert lines[5].split()[:2] == ["grr", "base"] and lines[5].endswith("0.0051 ± 5.8e-05")
    assert "3 repeats cannot show a difference at alpha 0.05; at least 6 are needed" in out.stdout
    assert "(1 failed)" in lines[5]


def test_json_output_feeds_compare(run_dir, tmp_path):
    jsonl = str(run_dir / "results.jsonl")
    out = ldpbench(tmp_path, "leaderboard", jsonl, "--format", "json", "-o", "lb.json")
    assert out.returncode == 0 and out.stdout == ""
    data = json.loads((tmp_path / "lb.json").read_text())
    assert [(r["oracle"], r["epsilon"], r["repeats"], r["failed"], r["best"]) for r in data] == [
        ("oue", 1.0, 3, 0, True),
        ("grr", 1.0, 3, 1, False),
        ("oue", 4.0, 3, 0, True),
        ("grr", 4.0, 3, 0, False),
    ]
    same = ldpbench(tmp_path, "compare", "lb.json", str(run_dir), "--format", "table")
    assert same.returncode == 0 and same.stdout.startswith("OK: 4 unchanged")


def test_markdown_and_csv(run_dir, tmp_path):
    md = ldpbench(tmp_path, "leaderboard", str(run_dir), "--format", "markdown").stdout
    assert md.startswith("### zipf · mse (lower is better)\n\n| oracle   | pipeline   |")
    assert "**0.0101 ± 5.8e-05**" in md
    # a manifest's cell_order (the spec's order) beats the file's finishing order
    order = [f"{o}-{e}-{r}" for e in (1.0, 4.0) for o in ("grr", "oue") for r in range(4)]
    (run_dir / "manifest.json").write_text(json.dumps({"schema_version": 1, "cell_order": order}))
    csv = ldpbench(tmp_path, "leaderboard", str(run_dir), "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("dataset,users,epsilon,oracle,pipeline,metric,greater_is_better,mean,stderr")
    assert [line.split(",")[3] for line in csv[1:]] == ["grr", "oue", "grr", "oue"]


def test_a_torn_last_line_is_skipped_with_a_warning(run_dir, tmp_path):
    path = run_dir / "results.jsonl"
    path.write_bytes(path.read_bytes() + b'{"cell_id": "oue-1.0-9", "datas')
    out = ldpbench(tmp_path, "leaderboard", str(run_dir))
    assert out.returncode == 0
    assert out.stderr.startswith("ldpbench: warning:") and "skipped 1" in out.stderr


def test_errors_exit_2_without_a_traceback(run_dir, tmp_path):
    missing = ldpbench(tmp_path, "leaderboard", "nowhere")
    assert missing.returncode == 2 and "no results.jsonl" in missing.stderr
    path = run_dir / "results.jsonl"
    path.write_text(path.read_text().replace('"schema_version": 1', '"schema_version": 99', 1))
    newer = ldpbench(tmp_path, "leaderboard", str(run_dir))
    assert newer.returncode == 2 and "update ldpbench" in newer.stderr
    assert "Traceback" not in missing.stderr + newer.stderr
