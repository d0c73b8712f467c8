"""``ldpbench audit`` and the audit inside ``ldpbench check-plugin``, with default settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ldpbench.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BUILTIN = ("grr", "olh", "oue", "hr", "ss", "sue", "blh", "adp")
LEAKY = ("leaky-grr-2eps", "leaky-ss-2eps", "leaky-ss-window", "leaky-ue-bug")


def _cli(capsys, *args):
    code = main([*args, "--plugins-dir", str(FIXTURES)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILTIN)
def test_audit_passes_every_correct_oracle(capsys, name):
    code, out, err = _cli(capsys, "audit", name)
    assert code == 0, out + err
    assert "verdict: consistent" in out
    assert "lower bound" in out and "exact: passed" in out
    for eps in ("0.5", "1", "4"):
        assert f"\n  {eps:>8}  " in out  # one row per claimed epsilon


@pytest.mark.parametrize("name", LEAKY)
def test_audit_catches_every_leaky_oracle(capsys, name):
    code, out, err = _cli(capsys, "audit", name, "--json")
    assert code == 3, out + err
    report = json.loads(out)
    assert report["failed"] and report["verdict"].startswith("LEAK")
    assert report["empirical"]["tests"] == 48
    assert any(b["leak"] for b in report["empirical"]["budgets"])  # the empirical audit alone catches it
    assert report["exact"]["passed"] is False


@pytest.mark.slow
@pytest.mark.parametrize("name", LEAKY)
def test_check_plugin_catches_every_leaky_oracle(capsys, name):
    code, out, err = _cli(capsys, "check-plugin", name, "--json")
    assert code == 3, out + err
    outcomes = {c["check"]: c["outcome"] for c in json.loads(out)["checks"]}
    assert outcomes["check_output_table_ldp"] == "FAILED"
    assert outcomes["empirical_privacy_audit"] == "FAILED"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
def test_check_plugin_passes_correct_oracles_with_the_quick_audit(capsys, name):
    code, out, err = _cli(capsys, "check-plugin", name, "--json")
    assert code == 0, out + err
    checks = {c["check"]: c for c in json.loads(out)["checks"]}
    audit = checks["empirical_privacy_audit"]
    assert audit["outcome"] == "passed" and "5000 reports per input" in audit["detail"]


def test_audit_options_are_used(capsys):
    code, out, _ = _cli(
        capsys,
        "audit",
        "olh",
        "--param",
        "g=3",
        "--domain",
        "40",
        "--epsilon",
        "2",
        "--trials",
        "3000",
        "--alpha",
        "0.01",
        "--seed",
        "5",
        "--json",
    )
    assert code == 0
    report = json.loads(out)
    emp = report["empirical"]
    assert report["params"] == {"g": 3}
    assert (emp["d"], emp["trials"], emp["alpha"], emp["tests"]) == (40, 3000, 0.01, 16)
    assert [b["epsilon"] for b in emp["budgets"]] == [2.0]


def test_an_oracle_with_nothing_to_audit_says_so(capsys):
    code, out, err = _cli(capsys, "audit", "opaque-grr")
    assert code == 3  # an audit that looked at nothing is not a pass
    assert "cannot audit empirically: Opaque has neither support_matrix nor a report density" in out
    assert "verdict: not audited" in out and "nothing was audited" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["audit", "gr"], "did you mean 'grr'"),
        (["audit", "grr", "--alpha", "1.5"], "--alpha must lie in (0, 1)"),
        (["audit", "grr", "--trials", "1"], "--trials must lie in"),
        (["audit", "grr", "--domain", "1"], "--domain must lie in [2, 1048576]"),
        (["audit", "grr", "--domain", "1000000000"], "--domain must lie in [2, 1048576]"),
        (["audit", "grr", "--epsilon", "nan"], "--epsilon must be a positive finite number"),
        (["audit", "olh", "--param", "gg=2"], "did you mean 'g'"),
    ],
)
def test_usage_errors_exit_2(capsys, args, message):
    code, _, err = _cli(capsys, *args)
    assert code == 2 and message in err


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, exc, line",
    [
        ("raise-in-support-counts", "IndexError", 23),
        ("raise-in-perturb", "ValueError: deliberate failure in perturb", 33),
    ],
)
def test_check_plugin_reports_a_raising_plugin_as_failed_checks(run_cli, name, exc, line):
    out = run_cli("check-plugin", name, "--plugins-dir", FIXTURES)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "Traceback" not in out.stderr + out.stdout and "internal error" not in out.stderr
    assert exc in out.stdout and f"raising_oracles.py:{line})" in out.stdout
    table = out.stdout.split("\n\n")[1].splitlines()[2:]  # the table's rows, under its header
    rows = {line.split()[0]: line.split()[1] for line in table}
    from ldpbench.testing.checks.oracle import CHECKS as ORACLE_CHECKS

    # every kit check and the quick audit still ran
    assert len(rows) == len(ORACLE_CHECKS) + 1 and rows["check_constants"] == "passed"
    assert "FAILED" in rows.values()


@pytest.mark.slow
def test_audit_reports_a_raising_plugin(run_cli):
    out = run_cli("audit", "raise-in-perturb", "--plugins-dir", FIXTURES)
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert "error: empirical audit: ValueError: deliberate failure in perturb (raised at" in out.stdout


def test_check_oracle_names_the_exception_and_the_plugin_line():
    from ldpbench import build_plugins
    from ldpbench.testing import check_oracle

    plugins = build_plugins([FIXTURES])
    with pytest.raises(AssertionError, match=r"check_\w+ failed: IndexError: .*raising_oracles\.py:23"):
        check_oracle("raise-in-support-counts", plugins=plugins)


@pytest.mark.slow
def test_check_plugin_no_audit_leaves_the_audit_out(capsys):
    code, out, _ = _cli(capsys, "check-plugin", "hr", "--no-audit", "--json")
    assert code == 0
    assert "empirical_privacy_audit" not in {c["check"] for c in json.loads(out)["checks"]}
