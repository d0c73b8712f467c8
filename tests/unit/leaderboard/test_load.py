"""Reading a leaderboard file (ldpbench/leaderboard/load.py): a huge file is refused before it is read (issue 10)."""

from __future__ import annotations

import pytest
from support import leaderboard_row, write_json


def test_a_huge_leaderboard_is_refused_before_reading(tmp_path, monkeypatch):
    from ldpbench.errors import UsageError
    from ldpbench.leaderboard import load as leaderboard_file

    write_json(tmp_path, "big.json", [leaderboard_row()] * 50)
    monkeypatch.setattr(leaderboard_file, "MAX_LEADERBOARD_BYTES", 1000)
    with pytest.raises(UsageError, match="bytes, more than the 1,000"):
        leaderboard_file.load_leaderboard(tmp_path / "big.json", "baseline")


@pytest.mark.parametrize("content", ["[" * 200_000 + "]" * 200_000, "[1, 2]", "{not json"])
def test_a_bad_manifest_beside_a_json_leaderboard_is_no_manifest(tmp_path, content):
    """Reproduction (issue 28): `ldpbench report LB.json` read the manifest beside it unguarded
    (200,000-deep nesting: RecursionError traceback; 3 GiB: MemoryError). It is only a header."""
    from ldpbench.leaderboard.load import _beside_manifest
    from ldpbench.results.store import MANIFEST_FILE

    (tmp_path / MANIFEST_FILE).write_text(content)
    assert _beside_manifest(tmp_path / "leaderboard.json") is None


def test_a_huge_manifest_beside_a_json_leaderboard_is_not_read(tmp_path, monkeypatch):
    from ldpbench.leaderboard import load
    from ldpbench.results.store import MANIFEST_FILE

    monkeypatch.setattr(load, "MAX_LEADERBOARD_BYTES", 1000)
    (tmp_path / MANIFEST_FILE).write_text('{"a": "' + "x" * 5000 + '"}')
    assert load._beside_manifest(tmp_path / "leaderboard.json") is None
