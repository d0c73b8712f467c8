"""The encoded reports of perturb against the declared output table (ldpbench.audit.law)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import plugins_with_fixtures

from ldpbench.audit import exact_audit
from ldpbench.audit.law import check_point, chi_square_test, draws_for_power, homogeneity_test


def test_chi_square_test_accepts_its_law_and_refuses_an_impossible_output():
    rng = np.random.default_rng(0)
    probs = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    g, dof, p = chi_square_test(rng.multinomial(4000, probs), probs)
    assert dof == 3 and p > 1e-3
    assert chi_square_test(np.array([10, 0, 0, 0, 1]), probs)[2] == 0.0
    assert chi_square_test(rng.multinomial(4000, [0.4, 0.4, 0.15, 0.05, 0]), probs)[2] < 1e-6


def test_chi_square_test_pools_rare_outputs():
    probs = np.r_[0.9, np.full(100, 0.001)]
    _, dof, _ = chi_square_test(np.r_[900, np.full(100, 1)], probs)
    assert dof == 1  # 100 outputs expected once each: one pooled cell beside the common one


def test_more_outputs_or_a_stricter_level_need_more_draws():
    assert draws_for_power(1, 1e-3) <= draws_for_power(63, 1e-3) <= draws_for_power(63, 1e-6)
    m = draws_for_power(7, 1e-4)
    from scipy.stats import chi2, ncx2

    assert ncx2.sf(chi2.isf(1e-4, 7), 7, 4 * m * 0.05**2) >= 0.9


def test_homogeneity_sees_an_order_that_depends_on_the_item():
    rng = np.random.default_rng(1)
    items = np.repeat([0, 1], 2000)
    rows = np.zeros(items.size, dtype=np.int64)
    fair = rng.integers(0, 2, items.size)
    assert homogeneity_test(rows, fair, items)[2] > 1e-3
    told = np.where(rng.random(items.size) < 0.6, items, 1 - items)  # message = item 60% of the time
    assert homogeneity_test(rows, told, items)[2] < 1e-6


@pytest.fixture(scope="module")
def plugins():
    return plugins_with_fixtures()


def _point(plugins, name, d, eps, **params):
    oracle = plugins.get("oracle", name).cls(d=d, epsilon=eps, **params)
    P = np.asarray(oracle.output_table()[0])
    return check_point(oracle, P, params, 0.05 / 100, np.random.default_rng(3))


def test_sue_before_its_fix_leaks_the_item_by_order_and_sue_does_not(plugins):
    # The reproduction: d = 3, eps = 0.5, the kept own item listed first.
    before = _point(plugins, "own-first-sue", 3, 0.5)
    assert not before.ok and "depends on the item" in before.describe()
    assert _point(plugins, "sue", 3, 0.5).ok
    assert not _point(plugins, "unsorted-ss", 4, 0.5, k=2).ok
    assert _point(plugins, "ss", 4, 0.5, k=2).ok


@pytest.mark.parametrize("name", ["dtype-grr", "hinted-grr"])
def test_a_dtype_or_an_extra_field_that_tells_the_item_is_caught(plugins, name):
    finding = _point(plugins, name, 3, 1.0)
    assert not finding.ok and "carries more than its row" in finding.describe()


def test_an_encoding_by_object_identity_is_refused(plugins):
    with pytest.raises(TypeError, match="compared by identity"):
        _point(plugins, "identity-grr", 3, 1.0)


def test_the_window_ss_passes_the_table_but_not_its_reports(plugins):
    cls = plugins.get("oracle", "disguised-ss-window").cls
    audit = exact_audit(cls, (0.5, 4.0), domains=(3, 4, 5, 6), law=True)
    assert audit.passed  # the inherited table is right
    assert audit.law is not None and not audit.law.passed
    assert audit.law.summary().startswith("FAILED")


def test_an_oracle_without_output_rows_is_not_tested_and_says_so(plugins):
    cls = plugins.get("oracle", "leaky-ue-bug").cls
    law = exact_audit(cls, (1.0,), domains=(2, 3), law=True).law
    assert law is not None and not law.available and "no output_rows" in law.summary()
    assert math.isclose(law.alpha, 0.05)


def test_a_rejection_is_a_finding_only_if_fresh_draws_reject_too(monkeypatch):
    """law_audit: a point that fails is drawn again; a pass the second time is a pass (a false
    alarm of the first sample), a second failure is the finding, a structural one is final."""
    import ldpbench.audit.law as law
    from ldpbench_plugins.oracles.grr import GRR

    def finding(ok: bool, broken: str = ""):
        return law.LawFinding(
            d=2, epsilon=1.0, params={}, draws=10, level=0.01, rows_p=0.5 if ok else 1e-9, broken=broken
        )

    calls: list[int] = []

    def scripted(outcomes):
        def check(oracle, P, params, level, rng, *, delta, power):
            assert power == pytest.approx(math.sqrt(law.POWER))  # each sample sized for sqrt(POWER)
            calls.append(len(calls))
            return outcomes[len(calls) - 1]

        return check

    points = [(GRR(d=2, epsilon=1.0), {})]
    for outcomes, ok, n_calls in [
        ([finding(False), finding(True)], True, 2),  # unconfirmed: no finding
        ([finding(False), finding(False)], False, 2),  # confirmed
        ([finding(False, broken="a message in two rows")], False, 1),  # structural: no second look
        ([finding(True)], True, 1),
    ]:
        calls.clear()
        monkeypatch.setattr(law, "check_point", scripted(outcomes))
        audit = law.law_audit(points)
        assert [f.ok for f in audit.findings] == [ok] and len(calls) == n_calls
