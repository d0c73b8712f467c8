"""The whole-record audit (ldpbench/audit/records.py): exact ratios of a known law, and verdicts that
never claim more than was checked (a leaky table, reports that do not follow it, undeclared parts,
a raising plugin)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.audit.records import attribute_log_ratio, max_log_ratio, records_audit


def _rr(p: float) -> np.ndarray:
    return np.array([[p, 1 - p], [1 - p, p]])


class TwoBits:
    """Two binary attributes, each by binary randomized response at ``eps / 2`` (SPL over [2] x [2]);
    ``declared`` the bound it claims over any two records, ``wrong`` draws at the wrong p."""

    def __init__(self, declared=None, wrong=False, draws=True, accounting=True, table=True, raises=False):
        self.declared, self.wrong, self.draws, self.accounting, self.table, self.raises = (
            declared,
            wrong,
            draws,
            accounting,
            table,
            raises,
        )

    def p(self, eps):
        return math.exp(eps / 2) / (math.exp(eps / 2) + 1)

    def report_table(self, sizes, eps):
        if self.raises:
            raise RuntimeError("boom")
        return np.kron(_rr(self.p(eps)), _rr(self.p(eps))) if self.table else None

    def record_accounting(self, eps, sizes):
        if not self.accounting:
            return None
        return {"any_records": eps if self.declared is None else self.declared, "one_attribute": eps / 2}

    def perturb_records(self, rows, sizes, eps, rng):
        if not self.draws:
            return None
        p = self.p(eps) if not self.wrong else 0.9
        flip = rng.random(rows.shape) >= p
        return (rows ^ flip).astype(np.int64)

    def report_columns(self, reports, sizes, eps):
        return reports[:, 0] * 2 + reports[:, 1]


def _audit(protocol, **kw):
    return records_audit(protocol, name="two-bits", epsilons=(1.0,), sizes=((2, 2),), trials=4000, **kw)


def test_the_exact_ratios_of_a_known_law():
    P = np.kron(_rr(0.75), _rr(0.75))
    assert max_log_ratio(P) == pytest.approx(2 * math.log(3))
    assert attribute_log_ratio(P, (2, 2)) == pytest.approx(math.log(3))
    P[0, 3] = 0.0
    assert max_log_ratio(P) == math.inf


def test_a_correct_protocol_is_consistent():
    # alpha 1e-6 over 2 chi-square tests: a correct protocol fails with probability 1e-6
    result = _audit(TwoBits(), alpha=1e-6)
    assert not result.failed and not result.partial and result.audited
    assert result.verdict.startswith("consistent")
    (pt,) = result.points
    assert pt.any_records == pytest.approx(1.0) and pt.one_attribute == pytest.approx(0.5)


def test_a_bound_below_the_exact_epsilon_is_a_leak():
    result = _audit(TwoBits(declared=0.9))
    assert result.failed and result.verdict.startswith("LEAK")
    assert "exact epsilon is 1.0000 > the declared 0.9000" in "\n".join(result.lines())


def test_reports_that_do_not_follow_the_table_fail():
    # p = 0.9 instead of 0.62: 4,000 reports put the chi-square statistic in the thousands
    result = _audit(TwoBits(wrong=True))
    assert result.failed and "does not follow report_table" in "\n".join(result.lines())


@pytest.mark.parametrize(
    ("kw", "said"),
    [
        ({"draws": False}, "perturb_records is not declared"),
        ({"accounting": False}, "record_accounting is not declared"),
    ],
)
def test_an_undeclared_part_is_partial_never_a_pass(kw, said):
    result = _audit(TwoBits(**kw))
    assert not result.failed and result.partial and result.verdict.startswith("partial")
    assert f"could not check: {said}" in "\n".join(result.lines())


def test_no_table_audits_nothing_and_a_raising_plugin_fails():
    result = _audit(TwoBits(table=False))
    assert not result.audited and result.verdict.startswith("not audited")
    result = _audit(TwoBits(raises=True))
    assert result.failed and result.verdict.startswith("FAILED") and "boom" in result.errors[0]
