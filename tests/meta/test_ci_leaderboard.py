"""The committed CI baseline (reports/ci-baseline/) carries the schema version.

The gate itself, the CI leaderboard run against that baseline, is tests/system/test_ci_leaderboard.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from ldpbench.results.versioning import SCHEMA_VERSION

BASELINE = "reports/ci-baseline/leaderboard.json"


def test_the_committed_baseline_carries_the_schema_version():
    # A baseline without it would still be read (as the pre-versioning format), but a future
    # schema bump could not tell it apart: regenerate it with scripts/update_ci_baseline.sh.
    rows = json.loads((Path(__file__).parents[2] / BASELINE).read_text(encoding="utf-8"))
    assert rows and all(row.get("schema_version") == SCHEMA_VERSION for row in rows)
