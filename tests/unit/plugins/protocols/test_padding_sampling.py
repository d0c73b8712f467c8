"""padding-sampling: the padded sample's law, the amplified GRR's privacy, the moments' formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpbench.types import Domain, Population
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.protocols import padding_sampling as ps


def _pop():
    # users: {0, 1}, {}, {2}, {0, 1, 2, 3}, {3}
    return Population.from_sets(np.array([0, 2, 2, 3, 7, 8]), np.array([0, 1, 2, 0, 1, 2, 3, 3]), 4)


def test_the_padded_sample_has_the_stated_law():
    # User {0, 1, 2, 3} with ell = 2 samples each item w.p. 1/4; user {0, 1} each w.p. 1/2; the
    # empty set one of the two dummies 4, 5 w.p. 1/2, {3} the one dummy 4 w.p. 1/2. 8,000 draws
    # each: sd of a share <= 0.0056, the tolerance 0.025 is 4.5 sd.
    pop, reps = _pop(), 8000
    sizes = np.tile(pop.set_sizes, reps)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    draws = ps.sample_padded(offsets, np.tile(pop.members, reps), 2, 4, np.random.default_rng(0)).reshape(reps, 5)
    share = lambda user, v: float(np.mean(draws[:, user] == v))  # noqa: E731
    assert abs(share(0, 0) - 0.5) < 0.025 and abs(share(0, 1) - 0.5) < 0.02
    assert abs(share(1, 4) - 0.5) < 0.025 and abs(share(1, 5) - 0.5) < 0.02
    assert abs(share(2, 2) - 0.5) < 0.025 and abs(share(2, 4) + share(2, 5) - 0.5) < 0.02
    assert all(abs(share(3, v) - 0.25) < 0.025 for v in range(4))
    assert set(np.unique(draws[:, 4])) == {3, 4} and not np.any(draws[:, 1] < 4)


@pytest.mark.parametrize(("d", "ell", "epsilon"), [(3, 2, 1.0), (2, 3, 0.5), (4, 1, 2.0)])
def test_grr_at_the_amplified_budget_after_sampling_is_epsilon_ldp_exactly(d, ell, epsilon):
    # P(y | S) = sum_x P(sample x | S) P_grr(y | x) over every subset S of [d], with GRR's own output
    # table: the largest ratio over (y, S, S') is e^epsilon (attained: the bound is tight).
    grr = GRR(d + ell, ps.amplified_epsilon(epsilon, ell))
    table, _ = grr.output_table()
    laws = []
    for size in range(d + 1):
        for subset in itertools.combinations(range(d), size):
            sample = np.zeros(d + ell)
            width = max(size, ell)
            sample[list(subset)] = 1 / width
            sample[d : d + width - size] = 1 / width  # the dummies d .. d + ell - size - 1
            laws.append(table @ sample)
    laws = np.array(laws)
    worst = float(np.max(laws.max(axis=0) / laws.min(axis=0)))
    assert worst <= math.exp(epsilon) * (1 + 1e-12) and worst >= math.exp(epsilon) * (1 - 1e-9)


def test_the_oracle_choice_is_the_papers_variance_rule():
    assert ps.uses_grr(100, 4, 1.0) and not ps.uses_grr(10_000, 1, 1.0)
    for d, ell, eps in [(50, 2, 1.0), (500, 3, 2.0), (5000, 1, 0.5)]:
        e2 = ps.amplified_epsilon(eps, ell)
        var_grr = (d + ell - 2 + math.exp(e2)) / math.expm1(e2) ** 2
        var_olh = 4 * math.exp(eps) / math.expm1(eps) ** 2
        assert ps.uses_grr(d, ell, eps) == (var_grr < var_olh)


def test_the_exact_mean_is_the_truth_plus_the_truncation_bias():
    pop = _pop()
    p, q = ps.oracle_probabilities("grr", 4, 2, 1.0)
    mean, var = ps.psfo_moments(pop, 2, p, q)
    bias = ps.truncation_bias(pop, 2)
    assert np.allclose(mean, pop.frequencies + bias)
    assert np.allclose(bias, [-0.5 / 5, -0.5 / 5, -0.5 / 5, -0.5 / 5])  # only {0,1,2,3} is longer than 2
    assert np.allclose(ps.truncation_bias(pop, 4), 0) and np.all(var > 0)


def test_accounting_round_oracles_and_tags():
    proto = ps.PaddingSampling(ell=3)
    (group,) = proto.privacy_accounting(2.0)
    assert group["epsilon"] == 2.0 and sum(group["per_round"]) == 2.0
    assert proto.round_oracles(2.0, Domain.enumerable(100)) == []  # GRR after sampling: tested above
    assert ps.PaddingSampling(oracle="olh").round_oracles(2.0, Domain.enumerable(100))[0][2] == 2.0
    assert proto.tags().records == ("set", "item") and proto.tags().result == "frequencies"


@pytest.mark.parametrize("oracle", ["grr", "olh"])
@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_a_run_estimates_the_shares_of_users(oracle, simulation):
    # 20,000 users holding {0} or {0, 1} or {2}: shares 0.75, 0.25, 0.25; ell = 2, eps = 4 (sd of
    # an estimate below 0.02 for both oracles).
    offsets = np.concatenate([[0], np.cumsum(np.tile([1, 2, 1, 1], 5000))])
    members = np.tile([0, 0, 1, 2, 0], 5000)
    pop = Population.from_sets(offsets, members, 3)
    est = ps.PaddingSampling(ell=2, oracle=oracle).run(pop, 4.0, np.random.default_rng(3), simulation=simulation)[
        "frequencies"
    ]
    assert est.n == 20_000 and est.info["oracle"] == oracle
    assert np.allclose(est.frequencies, [0.75, 0.25, 0.25], atol=0.08)
