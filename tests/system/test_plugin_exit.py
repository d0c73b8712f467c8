"""A plugin calling sys.exit() fails only its own rows; the run does not end with exit code 1,
which means "regression" (issue 7: a plugin that raises fails only its own cells)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

SPEC = """\
name: exits
seed: 2
repeats: 2
datasets:
  - zipf: {d: 16, n: 1000, s: 1.2}
epsilons: [1]
oracles: [grr, oue]
pipelines: [base, quit]
metrics: [mse]
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sys_exit_in_a_plugin_fails_its_rows_and_the_run_goes_on(tmp_path, run_cli, workers):
    (tmp_path / "plugs").mkdir()
    shutil.copy(FIXTURES / "exiting_plugins.py", tmp_path / "plugs" / "exiting_plugins.py")
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    res = run_cli("run", "spec.yaml", "--format", "json", "--out", "o", "--workers", workers, "--plugins-dir", "plugs")
    assert res.returncode == 3, res.stderr
    assert "SystemExit" in res.stderr and "Traceback" not in res.stderr
    rows = json.loads(res.stdout)
    assert {(r["pipeline"], r["failed"]) for r in rows} == {("base", 0), ("quit", 2)}
