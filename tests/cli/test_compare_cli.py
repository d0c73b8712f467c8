"""End to end: run the real ``ldpbench compare`` on hand-made leaderboards; check lines and exit codes."""

from __future__ import annotations

import json

from support import leaderboard_row, run_ldpbench, write_json

BASELINE = [
    leaderboard_row("grr", 1.0),
    leaderboard_row("oue", 2.0),
    leaderboard_row("olh", 0.5, metric="ndcg@10", gib=True),
]


def test_newly_failing_and_not_comparable_rows(tmp_path):
    write_json(tmp_path, "base.json", BASELINE)
    current = [
        leaderboard_row("grr", 1.0, failed=1, repeats=9, error="ValueError: domain too small"),
        leaderboard_row("oue", 9.0, fingerprint="f2"),
        leaderboard_row("olh", 0.5, metric="ndcg@10", gib=True),
    ]
    write_json(tmp_path, "cur.json", current)
    out = run_ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert [(r["oracle"], r["mark"], r["status"]) for r in doc["rows"]] == [
        ("grr", "!", "failing"),
        ("oue", "x", "not comparable"),
        ("olh", "", "unchanged"),
    ]
    assert "ValueError: domain too small" in doc["rows"][0]["reason"]
