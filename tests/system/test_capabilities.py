"""``ldpbench validate`` refuses what a spec asks of an oracle that lacks it, at its line (issue 11):
aggregate simulation without an aggregate path, EM after an oracle without a channel."""

from __future__ import annotations

import re
import textwrap

# -- refused at validation time ------------------------------------------------------------------

PER_USER_ONLY = textwrap.dedent(
    '''
    from ldpbench import hookimpl
    from ldpbench.types import Oracle
    from ldpbench_plugins.oracles.grr import GRR


    class PerUserOnly(GRR):
        """GRR without an aggregate shortcut."""

        name = "per-user-only"
        sample_report_histogram = Oracle.sample_report_histogram
        sample_support_counts = Oracle.sample_support_counts


    @hookimpl
    def ldpbench_register_oracles(registry):
        registry.register(PerUserOnly)
    '''
)


SPEC = """\
name: capabilities
datasets: [{{zipf: {{d: 20, n: 500}}}}]
epsilons: [1]
{simulation}oracles:
  - grr
  - {oracle}
pipelines:
  - base
  - [{em}, norm-sub]
"""


def _validate(tmp_path, run_cli, oracle="grr", em="em", simulation=""):
    (tmp_path / "plugs").mkdir(exist_ok=True)
    (tmp_path / "plugs" / "per_user_only.py").write_text(PER_USER_ONLY)
    (tmp_path / "spec.yaml").write_text(SPEC.format(oracle=oracle, em=em, simulation=simulation))
    return run_cli("validate", "spec.yaml", "--plugins-dir", "plugs")


def test_aggregate_simulation_of_an_oracle_without_an_aggregate_path_is_refused(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, oracle="per-user-only", em="base-pos")
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.search(r"spec\.yaml:6: oracle 'per-user-only' has no aggregate path", out.stderr), out.stderr
    assert "simulation: per-user" in out.stderr and "Traceback" not in out.stderr
    ok = _validate(tmp_path, run_cli, oracle="per-user-only", em="base-pos", simulation="simulation: per-user\n")
    assert ok.returncode == 0, ok.stderr


def test_em_after_an_oracle_without_a_channel_is_refused(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, oracle="oue", em="em")
    assert out.returncode == 2, out.stdout + out.stderr
    line = next(line for line in out.stderr.splitlines() if "post-processor 'em'" in line)
    assert line.startswith("spec.yaml:9: ") and "oracle 'oue'" in line and "finite_output" in line
    assert "oracle 'grr'" not in out.stderr  # GRR has a channel
    for variant in ("em-corrected", "em-bootstrap"):  # the EM family inherits the tag
        assert _validate(tmp_path, run_cli, oracle="olh", em=variant).returncode == 2
    assert _validate(tmp_path, run_cli, oracle="hr", em="em").returncode == 0
