"""Personalized budgets: user sampling, the eps = inf group, and the combination (ldpbench.engine.groups)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.groups import (
    IdentityChannel,
    combine,
    exact_estimate,
    group_weights,
    reference_variance,
    simulate_groups,
    split_users,
)
from ldpbench.types import Population

PLUGINS = builtin_plugins()
POP = Population(np.array([500, 300, 120, 50, 20, 10, 0, 0]), name="toy")


def grr(d):
    return lambda eps: PLUGINS.create("oracle", "grr", {}, d=d, epsilon=eps)


def test_split_users_draws_without_replacement_and_respects_sizes():
    rng = np.random.default_rng(0)
    for _ in range(50):
        parts = split_users(POP, [100, 200, 30], rng)
        assert [int(p.sum()) for p in parts] == [100, 200, 30]
        assert np.all(sum(parts) <= POP.counts)  # the groups are disjoint users of the population
        assert all(np.all(p >= 0) for p in parts)


def test_split_users_can_take_the_whole_population():
    parts = split_users(POP, [POP.n - 10, 10], np.random.default_rng(1))
    assert np.array_equal(sum(parts), POP.counts)


def test_split_users_rejects_too_many_users_and_no_users():
    with pytest.raises(ValueError, match="cannot draw"):
        split_users(POP, [POP.n, 1], np.random.default_rng(0))
    with pytest.raises(ValueError):
        split_users(POP, [0, 0], np.random.default_rng(0))


def test_groups_are_drawn_afresh_each_call():
    rng = np.random.default_rng(3)
    a = split_users(POP, [50, 50], rng)
    b = split_users(POP, [50, 50], rng)
    assert not all(np.array_equal(x, y) for x, y in zip(a, b))


def test_infinite_budget_sends_the_true_values():
    counts = np.array([3, 0, 5, 2])
    est = exact_estimate(counts)
    assert est.epsilon == math.inf and est.n == 10
    assert np.array_equal(est.frequencies, counts / 10)
    assert np.array_equal(est.report_histogram, counts)
    assert np.allclose(est.channel.dense(), np.eye(4))
    assert isinstance(est.channel, IdentityChannel) and est.channel.tags().randomized_response == (1.0, 0.0)


def test_simulate_groups_returns_parts_in_order_with_their_budgets():
    est = simulate_groups(grr(POP.d), POP, [(0.5, 100), (2.0, 50), (math.inf, 20)], np.random.default_rng(2))
    assert [p.epsilon for p in est.parts] == [0.5, 2.0, math.inf]
    assert [p.n for p in est.parts] == [100, 50, 20]
    assert est.n == 170 and math.isnan(est.epsilon)
    assert est.parts[2].mechanism == "exact" and est.parts[0].mechanism == "grr"
    assert all(p.report_histogram is not None and p.channel is not None for p in est.parts)
    assert [g["count"] for g in est.info["groups"]] == [100, 50, 20]


def test_simulate_groups_is_reproducible_and_uses_the_per_user_path_too():
    groups = [(1.0, 80), (math.inf, 20)]
    a = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(9))
    b = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(9))
    assert np.array_equal(a.frequencies, b.frequencies)
    c = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(9), "per-user")
    assert c.n == 100 and c.parts[0].report_histogram.sum() == 80


def test_zero_user_groups_are_skipped():
    est = simulate_groups(grr(POP.d), POP, [(1.0, 0), (2.0, 30)], np.random.default_rng(4))
    assert len(est.parts) == 1 and est.epsilon == 2.0


def test_single_group_is_the_groups_own_estimate():
    est = simulate_groups(grr(POP.d), POP, [(1.0, 60)], np.random.default_rng(5))
    part = est.parts[0]
    assert np.array_equal(est.frequencies, part.frequencies)
    assert est.epsilon == 1.0 and est.p_star == part.p_star and est.report_histogram is part.report_histogram


def test_weights_are_inverse_reference_variances_and_do_not_depend_on_the_reports():
    d = POP.d
    groups = [(0.5, 100), (2.0, 50), (math.inf, 20)]
    ests = [simulate_groups(grr(d), POP, groups, np.random.default_rng(s)) for s in range(3)]
    weights = [[g["weight"] for g in e.info["groups"]] for e in ests]
    assert weights[0] == weights[1] == weights[2]
    parts = ests[0].parts
    expected = np.array([1 / reference_variance(p.p_star, p.q_star, p.n, d) for p in parts])
    assert np.allclose(group_weights(parts, d), expected / expected.sum(), rtol=1e-12)
    combined = sum(w * p.frequencies for w, p in zip(expected / expected.sum(), parts))
    assert np.allclose(ests[0].frequencies, combined, rtol=1e-12)
    noise = sum(w**2 * p.variance for w, p in zip(expected / expected.sum(), parts))
    assert np.allclose(ests[0].variance, noise, rtol=1e-12)


def test_reference_variance_is_the_binomial_support_variance():
    # GRR, d = 4, eps = ln 3: p = 3/6, q = 1/6; at f = 1/4: r = 1/6 + (2/6)/4 = 1/4.
    assert reference_variance(0.5, 1 / 6, 10, 4) == pytest.approx(0.25 * 0.75 / (10 * (1 / 3) ** 2), rel=1e-12)
    # eps = inf: the sampling variance f (1 - f) / n.
    assert reference_variance(1.0, 0.0, 10, 4) == pytest.approx(0.25 * 0.75 / 10, rel=1e-12)


def test_combined_estimate_of_grr_groups_sums_to_one():
    est = simulate_groups(grr(POP.d), POP, [(0.3, 300), (4.0, 40), (math.inf, 5)], np.random.default_rng(6))
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-12)


def test_combine_rejects_nothing_and_keeps_parts():
    parts = (exact_estimate(np.array([1, 2, 3])), exact_estimate(np.array([3, 2, 1])))
    est = combine(parts, 3)
    assert est.parts == parts and np.allclose(est.frequencies, [1 / 3, 1 / 3, 1 / 3])


def test_non_positive_budget_is_refused():
    with pytest.raises(ValueError, match="positive"):
        simulate_groups(grr(POP.d), POP, [(0.0, 10)], np.random.default_rng(0))


@pytest.mark.parametrize("oracle", ["grr", "oue", "olh", "hr"])
def test_every_oracle_handles_groups(oracle):
    make = lambda eps: PLUGINS.create("oracle", oracle, {}, d=POP.d, epsilon=eps)  # noqa: E731
    est = simulate_groups(make, POP, [(1.0, 200), (4.0, 100), (math.inf, 30)], np.random.default_rng(8))
    assert [p.epsilon for p in est.parts] == [1.0, 4.0, math.inf]
    assert est.frequencies.shape == (POP.d,) and np.all(np.isfinite(est.frequencies))
    assert est.parts[0].mechanism == oracle and est.mechanism == oracle


def test_users_rng_alone_decides_the_users():
    # The engine passes a users stream keyed by (dataset, user mix, repeat) and a perturbation
    # stream per oracle: the same users stream gives the same users whatever the oracle and its rng.
    groups = [(0.5, 100), (2.0, 50), (math.inf, 40)]
    a = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(1), users_rng=np.random.default_rng(7))
    make_hr = lambda eps: PLUGINS.create("oracle", "hr", {}, d=POP.d, epsilon=eps)  # noqa: E731
    b = simulate_groups(make_hr, POP, groups, np.random.default_rng(2), users_rng=np.random.default_rng(7))
    assert np.array_equal(a.parts[2].report_histogram, b.parts[2].report_histogram)
    c = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(1), users_rng=np.random.default_rng(8))
    assert not np.array_equal(a.parts[2].report_histogram, c.parts[2].report_histogram)
    # Without users_rng one stream draws the users first, then the reports (direct simulations).
    d = simulate_groups(grr(POP.d), POP, groups, np.random.default_rng(7))
    assert np.array_equal(d.parts[2].report_histogram, a.parts[2].report_histogram)
