"""The averaging attack across rounds (ldpbench/audit/averaging.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpbench.audit.averaging import averaging_attack, epsilon_lower_bound, guess, rounds_audit

D, EPS = 8, 1.0
P = math.exp(EPS) / (math.exp(EPS) + D - 1)
KEEP = P - (1 - P) / (D - 1)  # GRR: keep w.p. KEEP, else uniform over all d


def _fresh(values, T, rng):
    """A fresh GRR report every round: T independent reports of each value."""
    kept = rng.binomial(T, KEEP, size=values.size)
    counts = rng.multinomial(T - kept, np.full(D, 1 / D))
    counts[np.arange(values.size), values] += kept
    return counts


def _memoized(values, T, rng):
    """GRR once, then that output repeated T times: the attack learns no more than one report."""
    out = np.where(rng.random(values.size) < KEEP, values, rng.integers(0, D, size=values.size))
    counts = np.zeros((values.size, D), dtype=np.int64)
    counts[np.arange(values.size), out] = T
    return counts


def test_the_bound_inverts_the_ldp_ceiling_on_guessing():
    s = math.exp(EPS) / (math.exp(EPS) + D - 1)
    assert epsilon_lower_bound(s, D) == pytest.approx(EPS)
    assert epsilon_lower_bound(1 / D, D) == 0.0 and epsilon_lower_bound(1.0, D) == math.inf


def test_ties_are_broken_at_random_and_a_strict_maximum_wins():
    rng = np.random.default_rng(0)
    assert (guess(np.array([[0, 3, 1]] * 5), rng) == 1).all()
    picks = guess(np.zeros((2000, 2)), rng)
    assert 900 < picks.sum() < 1100  # Binomial(2000, 1/2): sd 22


def test_fresh_reports_leak_more_with_rounds_memoized_ones_do_not():
    """4000 users per point; alpha = 1e-3: the memoized bound exceeds EPS with probability <= 1e-3."""
    rng = np.random.default_rng(11)
    fresh = averaging_attack(_fresh, D, [1, 64], 4000, rng, alpha=1e-3)
    memo = averaging_attack(_memoized, D, [1, 64], 4000, rng, alpha=1e-3)
    assert fresh[1].epsilon_lower > 3 * EPS  # success ~0.96 at T = 64
    assert fresh[1].success > fresh[0].success + 0.3
    assert all(pt.epsilon_lower <= EPS for pt in memo)
    assert abs(memo[1].success - P) < 0.03  # ~0.28, sd 0.007


# --- the averaging audit of an installed protocol (rounds_audit, ``ldpbench audit NAME``) --------


class _Declared:
    """A protocol stand-in: declares ``epsilon_inf`` (or none) and draws with ``draw``."""

    name = "toy"

    def __init__(self, draw, eps_inf):
        self.draw, self.eps_inf = draw, eps_inf

    def privacy_accounting(self, eps):
        return [{"epsilon": eps, "epsilon_inf": self.eps_inf, "epsilon_1": eps}]

    def static_supports(self, d, eps, values, T, rng):  # noqa: N803
        assert d == D and eps == EPS
        return self.draw(values, T, rng)


def test_the_audit_flags_fresh_reports_that_claim_a_bound_over_rounds():
    """Fresh GRR claiming eps_inf = eps: at T = 64 the bound is ~5 (doc table) > 1: LEAK; the
    memoized one stays within (alpha 0.05 over 3 points: a false alarm has probability <= 0.05)."""
    leaky = rounds_audit(_Declared(_fresh, EPS), d=D, epsilons=[EPS], rounds=[1, 8, 64], users=3000)
    assert leaky.failed and leaky.verdict.startswith("LEAK")
    assert 64 in [pt.rounds for pt in leaky.budgets[0].leaks]
    memo = rounds_audit(_Declared(_memoized, EPS), d=D, epsilons=[EPS], rounds=[1, 8, 64], users=3000)
    assert not memo.failed and memo.verdict.startswith("consistent"), memo.lines()
    # Undeclared bound (the naive protocol): no leak, the loss grows with T, said as such.
    naive = rounds_audit(_Declared(_fresh, None), d=D, epsilons=[EPS], rounds=[1, 64], users=3000)
    assert not naive.failed and "grows with T" in naive.budgets[0].status()
    assert naive.budgets[0].points[1].epsilon_lower > 3 * EPS


def test_a_bound_beyond_the_attacks_reach_is_not_a_pass():
    """With 200 users the attack can show at most ln(7 * s/(1 - s)) at s = 0.05^(1/200): ~ 5.4 < 9."""
    out = rounds_audit(_Declared(_memoized, 9.0), d=D, epsilons=[EPS], rounds=[1], users=200)
    assert out.partial and out.verdict.startswith("partial") and "cannot reach" in out.budgets[0].status()
    assert out.budgets[0].ceiling == pytest.approx(math.log(7 * 0.05 ** (1 / 200) / (1 - 0.05 ** (1 / 200))))


def test_a_protocol_without_static_supports_is_not_audited():
    class Bare(_Declared):
        def static_supports(self, d, eps, values, T, rng):  # noqa: N803
            raise NotImplementedError

    out = rounds_audit(Bare(_fresh, EPS), d=D, epsilons=[EPS], rounds=[1], users=100)
    assert not out.audited and out.verdict.startswith("not audited") and "static_supports" in out.reason


def test_ldpbench_audit_runs_the_averaging_attack_on_longitudinal_protocols(capsys):
    """The CLI on the built-in protocols, 3000 users per point: memoized within eps_inf, naive
    growing (the full-size curves are docs/longitudinal.md's)."""
    from ldpbench.cli import main

    args = ["--trials", "3000", "--epsilon", "1", "--rounds", "1", "--rounds", "64", "--domain", "8", "--json"]
    assert main(["audit", "l-grr", *args]) == 0
    memo = json.loads(capsys.readouterr().out)
    assert memo["verdict"].startswith("consistent") and memo["budgets"][0]["epsilon_inf"] == 1.0
    assert main(["audit", "l-naive", *args]) == 0
    naive = json.loads(capsys.readouterr().out)
    assert naive["budgets"][0]["epsilon_inf"] is None
    assert naive["budgets"][0]["points"][1]["epsilon_lower"] > 3.0  # ~5.1 at T = 64 (doc table)
    assert main(["audit", "pem", "--trials", "100"]) == 2  # not longitudinal: a usage error
