"""No built-in plugin writes into its inputs (issue 10).

Every array handed to a plugin is now read-only, so a built-in that wrote into its input would
fail its rows here (``assignment destination is read-only``) instead of silently changing the
numbers of the pipelines after it. Every built-in oracle, post-processor and metric, both
simulation paths, and the Blender protocol with its outputs, on small data.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from ldpbench.cli import main
from ldpbench.pluginmanager import build_plugins

ORACLE_SPEC = """\
name: builtins
seed: 4
repeats: 1
simulation: {simulation}
datasets:
  - zipf: {{d: 16, n: 2000, s: 1.1}}
epsilons: [2]
oracles: [{oracles}]
pipelines: [{pipelines}]
metrics: [{metrics}]
"""

BLENDER_SPEC = """\
name: blender-builtins
seed: 4
repeats: 1
datasets:
  - synthetic-search: {users: 20000, queries: 500}
epsilons: [4]
oracles: [{blender: {head_list_size: 20}}]
pipelines: [base, norm-sub, base-cut, post-pos]
metrics: [l1, mse, {ndcg: {k: 10}}]
"""


def _names(kind):
    return [i.name for i in build_plugins().registry(kind)]


@pytest.mark.parametrize("simulation", ["aggregate", pytest.param("per-user", marks=pytest.mark.slow)])
def test_every_builtin_oracle_post_processor_and_metric_leaves_its_inputs_alone(tmp_path, capsys, simulation):
    spec = ORACLE_SPEC.format(simulation=simulation, oracles=", ".join(_names("oracle")),
                              pipelines=", ".join(_names("postprocessor")), metrics=", ".join(_names("metric")))
    (tmp_path / "spec.yaml").write_text(spec)
    code = main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()[1:]]
    errors = {r["error"] for r in rows if r["error"]}
    assert not [e for e in errors if "read-only" in e], errors
    # EM needs a report histogram: olh and oue cannot feed it (a capability, not a fault).
    assert all("needs each report's likelihood" in e for e in errors), errors
    assert code == (3 if errors else 0), err


def test_blender_and_its_outputs_leave_their_inputs_alone(tmp_path, capsys):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(BLENDER_SPEC))
    code = main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
