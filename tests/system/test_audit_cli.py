"""``ldpbench audit`` and the audit inside ``ldpbench check-plugin``, with default settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import LEAKY_ORACLES, audit_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


BUILTIN = ("grr", "olh", "oue", "hr", "ss", "sue", "blh", "adp")


@pytest.mark.parametrize("name", BUILTIN)
def test_audit_passes_every_correct_oracle(capsys, name):
    code, out, err = audit_cli(capsys, "audit", name)
    assert code == 0, out + err
    assert "verdict: consistent" in out
    assert "lower bound" in out and "exact: passed" in out
    for eps in ("0.5", "1", "4"):
        assert f"\n  {eps:>8}  " in out  # one row per claimed epsilon


@pytest.mark.parametrize("name", LEAKY_ORACLES)
def test_check_plugin_catches_every_leaky_oracle(capsys, name):
    code, out, err = audit_cli(capsys, "check-plugin", name, "--json")
    assert code == 3, out + err
    outcomes = {c["check"]: c["outcome"] for c in json.loads(out)["checks"]}
    assert outcomes["check_output_table_ldp"] == "FAILED"
    assert outcomes["empirical_privacy_audit"] == "FAILED"


@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
def test_check_plugin_passes_correct_oracles_with_the_quick_audit(capsys, name):
    code, out, err = audit_cli(capsys, "check-plugin", name, "--json")
    assert code == 0, out + err
    checks = {c["check"]: c for c in json.loads(out)["checks"]}
    audit = checks["empirical_privacy_audit"]
    assert audit["outcome"] == "passed" and "5000 reports per input" in audit["detail"]


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


def test_audit_reports_a_raising_plugin(run_cli):
    out = run_cli("audit", "raise-in-perturb", "--plugins-dir", FIXTURES)
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert "error: empirical audit: ValueError: deliberate failure in perturb (raised at" in out.stdout


def test_check_plugin_no_audit_leaves_the_audit_out(capsys):
    code, out, _ = audit_cli(capsys, "check-plugin", "hr", "--no-audit", "--json")
    assert code == 0
    assert "empirical_privacy_audit" not in {c["check"] for c in json.loads(out)["checks"]}


def test_check_plugin_fails_the_window_ss_by_its_reports(capsys):
    code, out, err = audit_cli(capsys, "check-plugin", "disguised-ss-window", "--json")
    assert code == 3, out + err
    outcomes = {c["check"]: c["outcome"] for c in json.loads(out)["checks"]}
    assert outcomes["check_output_table_ldp"] == "passed"  # the inherited table is eps-LDP
    assert outcomes["check_reports_follow_table"] == "FAILED"
    assert json.loads(out)["unaudited"] == []


def test_check_plugin_of_an_oracle_without_a_table_is_partial(capsys):
    code, out, err = audit_cli(capsys, "check-plugin", "she", "--trials", "2000")
    assert code == 3 and "check_output_table_ldp, check_reports_follow_table could not run" in err
    code, _, err = audit_cli(capsys, "check-plugin", "she", "--trials", "2000", "--allow-partial")
    assert code == 0 and "accepted (--allow-partial)" in err


def test_check_plugin_whose_empirical_audit_cannot_run_is_partial(capsys):
    # Before: "empirical_privacy_audit: not applicable" ended in exit 0.
    code, out, err = audit_cli(capsys, "check-plugin", "table-only-grr", "--trials", "2000")
    assert code == 3 and "empirical_privacy_audit could not run" in err, out + err
    assert audit_cli(capsys, "check-plugin", "table-only-grr", "--trials", "2000", "--allow-partial")[0] == 0
