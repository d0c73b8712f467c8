"""``compare`` never passes a bad number and never chokes on a bad file (issue 10).

Reproductions on the code before the fix:

- a post-processor that regressed to NaN gave ``OK: 8 unchanged`` (a NaN mean compared with
  nothing); an infinite mean of a greater-is-better metric read as ``better``;
- a baseline row with a NaN mean (hand-edited, or a metric that returned NaN) was accepted, so
  that row could never regress;
- a leaderboard of ``[[[[...`` 100 000 deep was a RecursionError traceback (exit 4); a ``mean`` of
  ``true`` or a ``dataset`` of ``5`` a TypeError further on; ``/dev/zero`` read until memory ran
  out; a FIFO blocked for ever.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import leaderboard_row, write_json


def ldpbench(cwd, *args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "ldpbench", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def one_line_error(out):
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith("ldpbench: error: ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr
    return out.stderr


@pytest.mark.parametrize("gib", [False, True])
def test_a_mean_that_became_nan_is_a_regression(tmp_path, gib):
    write_json(tmp_path, "base.json", [leaderboard_row(gib=gib)])
    write_json(tmp_path, "cur.json", [leaderboard_row(mean=None, stderr=None, gib=gib)])  # null: NaN in JSON
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "table")
    assert out.returncode == 1, out.stdout
    assert out.stdout.startswith("REGRESSION: 1 worse") and "no mean now (NaN)" in out.stdout


@pytest.mark.parametrize(("gib", "inf"), [(False, "1e999"), (True, "1e999"), (True, "-1e999")])
def test_an_infinite_mean_is_a_regression_whichever_way_the_metric_points(tmp_path, gib, inf):
    write_json(tmp_path, "base.json", [leaderboard_row(gib=gib)])
    (tmp_path / "cur.json").write_text(json.dumps([leaderboard_row(gib=gib, mean="INF")]).replace('"INF"', inf))
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "table")
    assert out.returncode == 1, out.stdout
    assert out.stdout.startswith("REGRESSION: 1 worse") and "the mean is" in out.stdout


@pytest.mark.parametrize("mean", [None, "1e999"])
def test_a_nan_or_infinite_baseline_mean_is_refused(tmp_path, mean):
    text = json.dumps([leaderboard_row(mean="M")]).replace('"M"', json.dumps(mean) if mean is None else mean)
    (tmp_path / "base.json").write_text(text)
    write_json(tmp_path, "cur.json", [leaderboard_row()])
    err = one_line_error(ldpbench(tmp_path, "compare", "base.json", "cur.json"))
    assert "cannot be a baseline" in err


def test_a_baseline_row_whose_every_repeat_failed_is_still_a_baseline(tmp_path):
    # null mean with failed > 0: a legitimate "failed in the baseline" row, compared as such.
    write_json(tmp_path, "base.json", [leaderboard_row(mean=None, stderr=None, failed=10, repeats=0, error="E: x")])
    write_json(tmp_path, "cur.json", [leaderboard_row()])
    out = ldpbench(tmp_path, "compare", "base.json", "cur.json", "--format", "table")
    assert out.returncode == 0 and out.stdout.startswith("OK: 1 fixed"), out.stdout + out.stderr


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("mean", True, "mean must be a number or null, got True"),
        ("mean", "1.0", "mean must be a number or null"),
        ("dataset", 5, "dataset must be a string, got 5"),
        ("greater_is_better", "no", "greater_is_better must be true or false"),
        ("repeats", -1, "repeats must be a non-negative integer"),
        ("failed", 1.5, "failed must be a non-negative integer"),
        ("fingerprint", ["x"], "fingerprint must be a string or null"),
        ("users", {"a": 1}, "users must be a string"),
    ],
)
def test_wrong_field_types_exit_2_with_one_line(tmp_path, field, value, message):
    write_json(tmp_path, "base.json", [leaderboard_row()])
    write_json(tmp_path, "cur.json", [leaderboard_row(**{field: value})])
    err = one_line_error(ldpbench(tmp_path, "compare", "base.json", "cur.json"))
    assert f"current cur.json: row 0: {message}" in err


@pytest.mark.parametrize("side", ["baseline", "current"])
def test_deeply_nested_json_exits_2(tmp_path, side):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    write_json(tmp_path, "ok.json", [leaderboard_row()])
    args = ("deep.json", "ok.json") if side == "baseline" else ("ok.json", "deep.json")
    err = one_line_error(ldpbench(tmp_path, "compare", *args))
    assert f"{side} deep.json" in err and "nested too deeply" in err


def test_dev_zero_exits_2_at_once(tmp_path):
    write_json(tmp_path, "ok.json", [leaderboard_row()])
    err = one_line_error(ldpbench(tmp_path, "compare", "/dev/zero", "ok.json", timeout=30))
    assert "baseline /dev/zero: is a device" in err


def test_a_fifo_exits_2_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    write_json(tmp_path, "ok.json", [leaderboard_row()])
    err = one_line_error(ldpbench(tmp_path, "compare", "ok.json", "pipe.json", timeout=30))
    assert "current pipe.json: is a FIFO" in err


def test_a_directory_without_results_exits_2(tmp_path):
    (tmp_path / "dir").mkdir()
    write_json(tmp_path, "ok.json", [leaderboard_row()])
    err = one_line_error(ldpbench(tmp_path, "compare", "dir", "ok.json"))
    assert "baseline dir: a directory with neither" in err
