"""What the audit's verdict says about the parts that ran (ldpbench/audit/verdict.py)."""

from __future__ import annotations

from ldpbench.audit import EmpiricalAudit, ExactAudit, LawAudit, PluginAudit
from ldpbench.audit.exact import TableFinding
from ldpbench.audit.law import LawFinding


def _table(params=None):
    return TableFinding(d=2, epsilon=1.0, params=params or {}, ratio=2.0, output=0, item=0, other=1)


def _law(ok=True):
    return LawFinding(d=2, epsilon=1.0, params={}, draws=2000, level=0.01, rows_p=0.5 if ok else 0.0)


def _emp(reason=""):
    return EmpiricalAudit(d=16, trials=100, alpha=0.05, budgets=(), tests=4, reason=reason)


def test_every_part_ran_is_consistent():
    audit = PluginAudit("x", {}, ExactAudit((_table(),), law=LawAudit((_law(),))), _emp())
    assert not audit.partial and not audit.failed and audit.verdict.startswith("consistent")


def test_a_table_only_at_sampled_parameters_is_partial():
    exact = ExactAudit((_table({"k": 3}),), law=LawAudit((_law(),)), at_defaults=False)
    audit = PluginAudit("x", {}, exact, _emp())
    assert audit.partial and audit.parts()["exact"].startswith("no output table could be enumerated at the given")
    assert audit.verdict.startswith("partial: no evidence") and "exact did not run" in audit.verdict


def test_reports_not_tied_to_the_table_are_partial_and_a_failed_law_is_a_leak():
    untied = ExactAudit((_table(),), law=LawAudit(unavailable="the oracle has no output_rows"))
    assert PluginAudit("x", {}, untied, _emp()).parts()["reports"] == "the oracle has no output_rows"
    leaky = PluginAudit("x", {}, ExactAudit((_table(),), law=LawAudit((_law(ok=False),))), _emp())
    assert leaky.failed and leaky.verdict.startswith("LEAK: the reports perturb returns")


def test_no_empirical_attack_is_partial():
    audit = PluginAudit("x", {}, ExactAudit((_table(),), law=LawAudit((_law(),))), _emp("cannot audit empirically"))
    assert audit.partial and audit.parts()["empirical"] == "cannot audit empirically"
