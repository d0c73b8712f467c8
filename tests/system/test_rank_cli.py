"""``ldpbench rank``: the ranks across a grid, printed, and the critical-difference diagram written."""

from __future__ import annotations

import json

from support import rank_board


def test_rank_cli_prints_ranks_and_writes_the_cd_png(tmp_path, run_cli):
    rows = [
        {"schema_version": 1, **r}
        for r in rank_board({"a": [1, 2, 3, 4], "b": [2, 3, 4, 5], "c": [3, 4, 5, 6]}).to_dicts()
    ]
    (tmp_path / "leaderboard.json").write_text(json.dumps(rows))
    out = run_cli("rank", "leaderboard.json", "--metric", "mse")
    assert out.returncode == 0, out.stderr
    assert "1.00  oue · a" in out.stdout and "Friedman chi2" in out.stdout
    assert (tmp_path / "cd-mse.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = run_cli("rank", "leaderboard.json", "--metric", "nope")
    assert bad.returncode != 0 and "no metric 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_rank_cli_takes_a_metric_plugin_name(tmp_path, run_cli):
    board = rank_board({"a": [1, 2, 3, 4], "b": [2, 3, 4, 5]}).to_dicts()
    rows = [{"schema_version": 1, **r, "metric": "topk-mse(k=10)"} for r in board]
    (tmp_path / "leaderboard.json").write_text(json.dumps(rows))
    out = run_cli("rank", "leaderboard.json", "--metric", "topk-mse")
    assert out.returncode == 0, out.stderr
    assert "topk-mse(k=10)" in out.stdout
