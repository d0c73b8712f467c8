"""docs/plugins/testing.md, "The kit and the audit at parameters of your own": the example runs as
printed, and its point holds — the exact-table checks exist only at the small parameters."""

from __future__ import annotations

import re
from pathlib import Path

TESTING = Path(__file__).resolve().parents[2] / "docs" / "plugins" / "testing.md"


def _example() -> str:
    section = TESTING.read_text(encoding="utf-8").split("### The kit and the audit at parameters of your own", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


def test_the_example_collects_the_table_checks_only_at_the_small_parameters_and_its_audit_runs():
    namespace: dict = {}
    exec(compile(_example(), "testing.md", "exec"), namespace)  # noqa: S102 - our own docs
    mark = namespace["test_conformance"].pytestmark[0]
    ids = [param.id for param in mark.args[1]]
    default = [i for i in ids if "m=4" not in i]
    small = [i for i in ids if "m=4" in i]
    assert default and small
    assert not any("check_output_table_ldp" in i for i in default)
    assert any("check_output_table_ldp" in i for i in small)
    namespace["test_privacy_audit_where_the_table_exists"]()
