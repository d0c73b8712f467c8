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
