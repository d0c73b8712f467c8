"""``ldpbench audit`` and the audit inside ``ldpbench check-plugin``, with default settings."""

from __future__ import annotations

import json

import pytest
from support import LEAKY_ORACLES, audit_cli, plugins_with_fixtures


@pytest.mark.parametrize("name", LEAKY_ORACLES)
def test_audit_catches_every_leaky_oracle(capsys, name):
    code, out, err = audit_cli(capsys, "audit", name, "--json")
    assert code == 3, out + err
    report = json.loads(out)
    assert report["failed"] and report["verdict"].startswith("LEAK")
    assert report["empirical"]["tests"] == 48
    assert any(b["leak"] for b in report["empirical"]["budgets"])  # the empirical audit alone catches it
    assert report["exact"]["passed"] is False


def test_audit_options_are_used(capsys):
    code, out, _ = audit_cli(
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
        "--shuffle-n",
        "100000",
        "--shuffle-delta",
        "1e-6",
        "--json",
    )
    assert code == 0
    report = json.loads(out)
    # the shuffling section: one report per user, the assumptions, each bound at each audited eps
    shuffle = report["shuffle"]
    assert (shuffle["n"], shuffle["delta"]) == (100000, 1e-6) and len(shuffle["assumptions"]) == 3
    (row,) = shuffle["central_epsilon"]
    assert row["epsilon"] == 2.0 and 0 < row["wang24-numerical"] < row["fmt21-numerical"] < row["fmt21-closed-form"] < 2
    assert "protocols" in shuffle["not_covered"]
    emp = report["empirical"]
    assert report["params"] == {"g": 3}
    assert (emp["d"], emp["trials"], emp["alpha"], emp["tests"]) == (40, 3000, 0.01, 16)
    assert [b["epsilon"] for b in emp["budgets"]] == [2.0]


def test_an_oracle_with_nothing_to_audit_says_so(capsys):
    code, out, err = audit_cli(capsys, "audit", "opaque-grr")
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
        (["audit", "grr", "--shuffle-delta", "0"], "--shuffle-delta must lie in (0, 1)"),
        (["audit", "grr", "--shuffle-n", "0"], "--shuffle-n must be at least 1"),
    ],
)
def test_usage_errors_exit_2(capsys, args, message):
    code, _, err = audit_cli(capsys, *args)
    assert code == 2 and message in err


def test_check_oracle_names_the_exception_and_the_plugin_line():
    from ldpbench.testing import check_oracle

    plugins = plugins_with_fixtures()  # the built-ins and tests/fixtures' raising oracles
    with pytest.raises(AssertionError, match=r"check_\w+ failed: IndexError: .*raising_oracles\.py:23"):
        check_oracle("raise-in-support-counts", plugins=plugins)


def test_audit_tests_what_perturb_sends_not_only_the_table(capsys):
    """The issue's third-party SS: a correct inherited table and SS's sets, listed from the true item
    on. Before, 'audit' said consistent (exit 0) and 'check-plugin' 20 passed, 1 not applicable."""
    code, out, err = audit_cli(capsys, "audit", "disguised-ss-window", "--trials", "2000", "--epsilon", "0.5")
    assert code == 3, out + err
    assert "exact: passed" in out and "  LEAK" not in out  # the table and the attacks on its sets pass
    assert "reports: FAILED" in out and "depends on the item" in out
    assert "verdict: LEAK: the reports perturb returns do not follow the output table" in out


def test_a_partial_audit_exits_3_unless_accepted(capsys):
    code, out, err = audit_cli(capsys, "audit", "she", "--trials", "2000", "--epsilon", "1")
    assert code == 3 and "verdict: partial" in out
    assert "partial (exact: no output table" in err and "pass --allow-partial" in err
    code, out, err = audit_cli(capsys, "audit", "she", "--trials", "2000", "--epsilon", "1", "--allow-partial")
    assert code == 0 and "accepted (--allow-partial)" in err


def test_an_audit_whose_empirical_part_cannot_run_is_partial(capsys):
    code, out, err = audit_cli(capsys, "audit", "table-only-grr", "--epsilon", "1", "--json")
    assert code == 3, out + err
    report = json.loads(out)
    assert report["partial"] and not report["failed"]
    assert report["parts"]["exact"] == report["parts"]["reports"] == "ran"
    assert "neither support_matrix nor a report density" in report["parts"]["empirical"]
    assert audit_cli(capsys, "audit", "table-only-grr", "--epsilon", "1", "--allow-partial")[0] == 0


def test_audit_of_a_multidimensional_protocol_is_the_whole_record_audit(capsys):
    code, out, err = audit_cli(
        capsys,
        "audit",
        "rs-fd",
        "--param",
        "oracle=oue-r",
        "--sizes",
        "2,3",
        "--epsilon",
        "1",
        "--trials",
        "3000",
        "--json",
    )
    assert code == 0, out + err
    report = json.loads(out)
    assert report["audit"] == "whole-record" and report["verdict"].startswith("consistent")
    (point,) = report["points"]
    # docs/multidimensional.md's table: any two records eps' = ln(2 (e - 1) + 1), one attribute 1.072
    assert point["any_records"] == pytest.approx(1.4899, abs=1e-4)
    assert point["one_attribute"] == pytest.approx(1.0718, abs=1e-4)
    assert len(point["reports_pvalues"]) == 2


def test_a_multidimensional_audit_that_cannot_check_the_reports_is_partial(capsys):
    args = ("audit", "l-spl", "--sizes", "2,2", "--epsilon", "1", "--trials", "1000")
    code, out, err = audit_cli(capsys, *args)
    assert code == 3 and "could not check: perturb_records is not declared" in out and "partial" in err
    code, _, err = audit_cli(capsys, *args, "--allow-partial")
    assert code == 0 and "accepted" in err
    code, _, err = audit_cli(capsys, "audit", "spl", "--sizes", "2,1")
    assert code == 2 and "--sizes" in err
