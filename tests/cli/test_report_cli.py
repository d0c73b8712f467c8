"""``ldpbench report RESULTS --out DIR``: Markdown with leaderboard tables and metric-vs-epsilon PNGs."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import cli

from ldpbench.results.store import RESULTS_FILE


def _dir(tmp_path: Path, name: str, results: str | None = None) -> Path:
    (tmp_path / name).mkdir()
    if results is not None:
        (tmp_path / name / RESULTS_FILE).write_text(results)
    return tmp_path / name


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: d / "nowhere", "no such file or directory"),
        (lambda d: _dir(d, "empty"), "neither results.jsonl nor leaderboard.json"),
        (lambda d: _dir(d, "junk", "hello\n"), "not an ldpbench results file"),
        (lambda d: _dir(d, "future", '{"schema_version": 99, "kind": "ldpbench-results"}\n'), "newer than the version"),
    ],
    ids=["missing", "empty-dir", "not-results", "newer-schema"],
)
def test_bad_results_exit_2_without_traceback(tmp_path, capsys, make, message):
    bad = make(tmp_path)
    code, out, err = cli(capsys, "report", bad, "--out", tmp_path / "out")
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.glob("out/*.png"))
