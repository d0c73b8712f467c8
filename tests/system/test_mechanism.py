"""The users of a repeat are shared by every oracle (ldpbench/engine/mechanism.py), checked through
``ldpbench.run`` with the probe metric of tests/support.py (see tests/unit/engine/test_mechanism.py)."""

from __future__ import annotations

import polars as pl
import pytest
from support import PAIRING_ORACLES, PAIRING_REPEATS, pairing_rows, pairing_values


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> pl.DataFrame:
    return pairing_rows(tmp_path_factory.mktemp("pairing"))


@pytest.mark.parametrize("users", ["mixed", "exact"])
def test_every_oracle_of_a_repeat_sees_the_same_users(rows, users):
    digest = pairing_values(rows, users, "inf-users")
    for rep in range(PAIRING_REPEATS):
        seen = {digest[(rep, oracle)] for oracle in PAIRING_ORACLES}
        assert len(seen) == 1, f"repeat {rep}: the oracles saw different users ({seen})"
