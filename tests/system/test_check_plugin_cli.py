"""``ldpbench check-plugin``: the conformance kit from the command line."""

from __future__ import annotations

import json
import textwrap

BROKEN = textwrap.dedent(
    '''
    from ldpbench import hookimpl
    from ldpbench.types import PostProcessor


    class DropLast(PostProcessor):
        """Forgets the last item: breaks the contract (output length)."""

        name = "drop-last"

        def apply(self, estimate, rng):
            return estimate.replace(frequencies=estimate.frequencies[:-1])


    @hookimpl
    def ldpbench_register_postprocessors(registry):
        registry.register(DropLast)
    '''
)


def test_a_builtin_oracle_passes_with_a_parameter(run_cli):
    out = run_cli("check-plugin", "olh", "--param", "g=2", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["kind"] == "oracle" and report["params"] == {"g": 2}
    outcomes = {c["check"]: c["outcome"] for c in report["checks"]}
    assert outcomes["check_unbiased_aggregate"] == "passed"
    assert outcomes["check_channel"] == "not applicable"  # OLH has no finite report space
    assert "FAILED" not in outcomes.values()


def test_a_broken_postprocessor_exits_3_naming_the_check(tmp_path, run_cli):
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "drop_last.py").write_text(BROKEN)
    out = run_cli("check-plugin", "drop-last", "--plugins-dir", "plugs")
    assert out.returncode == 3, out.stdout + out.stderr
    failed = [line.split()[0] for line in out.stdout.splitlines() if " FAILED " in f"{line} "]
    assert "check_postprocessor_returns_estimate" in failed
    assert "output length" in out.stdout
    assert "Traceback" not in out.stderr


def test_unknown_names_and_parameters_are_usage_errors(run_cli):
    out = run_cli("check-plugin", "norm_sub")
    assert out.returncode == 2 and "did you mean 'norm-sub'" in out.stderr
    out = run_cli("check-plugin", "olh", "--param", "gg=2")
    assert out.returncode == 2 and "did you mean 'g'" in out.stderr
    out = run_cli("check-plugin", "olh", "--param", "g")
    assert out.returncode == 2 and "KEY=VALUE" in out.stderr
