"""The empirical audit (ldpbench/audit/empirical.py): per-user supports, attacks, Clopper-Pearson bounds and the verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta
from support import audit_oracle, plugins_with_fixtures

from ldpbench.audit.empirical import ATTACKS, AttackResult, clopper_pearson, default_pairs, has_support_matrix
from ldpbench.audit.verdict import EPSILONS, QUICK, TRIALS

BUILTIN = ("grr", "olh", "oue", "hr")


LEAKY = ("leaky-grr-2eps", "leaky-ss-2eps", "leaky-ss-window", "leaky-ue-bug")


@pytest.fixture(scope="module")
def plugins():
    return plugins_with_fixtures()


@pytest.mark.parametrize("name", BUILTIN + ("ss",))
@pytest.mark.parametrize("d", [5, 300])
def test_support_matrix_rows_are_the_supports(plugins, name, d):
    oracle = plugins.create("oracle", name, d=d, epsilon=1.0)
    rng = np.random.default_rng(11)
    values = rng.integers(0, d, size=3000)
    reports = oracle.perturb(values, rng)
    S = oracle.support_matrix(reports)
    assert S.dtype == bool and S.shape == (3000, d)
    assert np.array_equal(S.sum(axis=0), oracle.support_counts(reports))
    # Own-item support rate is p* (binomial z within 5 sd).
    own = S[np.arange(values.size), values].mean()
    p = oracle.p_star
    assert abs(own - p) <= 5 * math.sqrt(p * (1 - p) / values.size)


def test_support_matrix_agrees_with_the_output_table(plugins):
    for name in BUILTIN:
        oracle = plugins.create("oracle", name, d=5, epsilon=1.0)
        _, S_table = oracle.output_table()
        rng = np.random.default_rng(2)
        reports = oracle.perturb(rng.integers(0, 5, size=500), rng)
        assert np.array_equal(oracle.support_matrix(reports), S_table[oracle.output_rows(reports)]), name


def test_clopper_pearson_matches_the_beta_quantiles():
    lo, up = clopper_pearson(0, 100, 0.01)
    assert lo == 0.0 and up == pytest.approx(1 - 0.01 ** (1 / 100), rel=1e-9)
    lo, up = clopper_pearson(100, 100, 0.01)
    assert up == 1.0 and lo == pytest.approx(0.01 ** (1 / 100), rel=1e-9)
    lo, up = clopper_pearson(30, 100, 0.025)
    assert lo == pytest.approx(beta.ppf(0.025, 30, 71)) and up == pytest.approx(beta.ppf(0.975, 31, 70))


def test_the_bound_is_the_log_ratio_of_the_one_sided_bounds():
    r = AttackResult("item", 1.0, 0, 1, 600, 1000, 200, 1000, level=0.01)
    lo1, _ = clopper_pearson(600, 1000, 0.005)
    _, up2 = clopper_pearson(200, 1000, 0.005)
    assert r.eps_lb == pytest.approx(math.log(lo1 / up2), rel=1e-12)
    assert r.eps_hat == pytest.approx(math.log(3))
    assert r.eps_lb < r.eps_hat < r.eps_ub
    assert AttackResult("joint", 1.0, 0, 1, 0, 10, 0, 10, 0.01).eps_lb == -math.inf


def test_alpha_is_split_over_every_attack_of_every_budget_and_pair(plugins):
    audit = audit_oracle(plugins, "grr", trials=200)
    assert audit.tests == len(EPSILONS) * 4 * len(ATTACKS)
    levels = [r.level for b in audit.budgets for r in b.attacks]
    assert len(levels) == audit.tests
    assert levels == pytest.approx([0.05 / audit.tests] * audit.tests)


def test_default_pairs_are_distinct_items_in_both_orders():
    pairs = default_pairs(16, np.random.default_rng(0))
    assert pairs[:2] == [(0, 1), (1, 0)] and len(pairs) == 4
    assert all(a != b and 0 <= a < 16 and 0 <= b < 16 for a, b in pairs)
    assert (pairs[3][1], pairs[3][0]) == pairs[2]


@pytest.mark.parametrize("trials", [TRIALS, QUICK])
@pytest.mark.parametrize("name", LEAKY)
def test_leaky_oracles_are_caught_by_the_default_and_the_quick_audit(plugins, name, trials):
    audit = audit_oracle(plugins, name, trials=trials)
    assert audit.verdict == "leak"
    assert any(b.eps_lb > b.epsilon for b in audit.budgets if b.epsilon <= 1)


def test_the_window_leak_needs_the_joint_attack(plugins):
    # Every item's inclusion has Subset Selection's law, so no single- or two-item event leaks.
    audit = audit_oracle(plugins, "leaky-ss-window", epsilons=(0.5,))
    (budget,) = audit.budgets
    marginal = [r.eps_lb for r in budget.attacks if r.attack != "joint"]
    assert max(marginal) <= 0.5
    assert budget.best.attack == "joint" and budget.eps_lb > 3


def test_the_ue_bug_is_caught_by_the_pair_attack_below_eps_1(plugins):
    audit = audit_oracle(plugins, "leaky-ue-bug", epsilons=(0.5,))
    (budget,) = audit.budgets
    assert budget.best.attack == "pair" and budget.eps_lb > 1.0  # true value ln(3.93) = 1.37


def test_an_oracle_without_support_matrix_cannot_be_audited_empirically(plugins):
    oracle = plugins.create("oracle", "opaque-grr", d=8, epsilon=1.0)
    assert not has_support_matrix(oracle)
    audit = audit_oracle(plugins, "opaque-grr", d=8)
    assert audit.verdict == "cannot audit" and "neither support_matrix nor a report density" in audit.reason
    assert not audit.leak


def test_same_seed_same_bounds(plugins):
    a = audit_oracle(plugins, "oue", trials=500, seed=4)
    b = audit_oracle(plugins, "oue", trials=500, seed=4)
    assert [x.eps_lb for x in a.budgets] == [x.eps_lb for x in b.budgets]


def test_large_domains_are_audited_in_bounded_chunks(plugins, monkeypatch):
    import ldpbench.audit.empirical as emp

    monkeypatch.setattr(emp, "CELLS_PER_CHUNK", 1024 * 7)  # 7 users per chunk at d = 1024
    audit = audit_oracle(plugins, "olh", d=1024, trials=40, epsilons=(1.0,))
    assert audit.budgets[0].attacks[0].n1 == 40
