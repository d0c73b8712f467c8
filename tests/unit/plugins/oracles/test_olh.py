"""OLH (plugins/oracles/olh.py; docs/algorithms.md §8.1): the exact output table over the full hash
family and the default range, the merged table, the parameter g, reports hashed under the user's seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import assert_ldp_table, assert_support_constants, builtin_plugins

from ldpbench.errors import ParamError
from ldpbench_plugins.oracles import _hashing
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH, default_range

DOMAINS = (2, 3, 5, 8)


BUDGETS = (0.1, 1.0, 4.0)


@pytest.mark.parametrize("d", (2, 3, 5))
@pytest.mark.parametrize("g", (2, 3, 4))
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_olh_full_hash_family(d, g, eps):
    """All g^d functions D -> [g] with uniform weight, times GRR over g (d <= 5, g <= 4)."""
    oracle = OLH(d=d, epsilon=eps, g=g)
    P, S = oracle.output_table()
    assert P.shape == (g**d * g, d)  # the full family, not the merged table
    assert_ldp_table(P, eps)
    assert_support_constants(oracle, P, S)
    # Every output (H, y) carries weight g^-d times a GRR probability over g values.
    q_g = 1 / (math.exp(eps) + g - 1)
    np.testing.assert_allclose(np.unique(np.round(P * g**d, 14)), np.unique(np.round([q_g, math.exp(eps) * q_g], 14)))


@pytest.mark.parametrize("d", DOMAINS)
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_olh_default_range(d, eps):
    """Default g (2, 4 and 56 for these budgets); large families come as the merged-pattern table."""
    oracle = OLH(d=d, epsilon=eps)
    P, S = oracle.output_table()
    assert_ldp_table(P, eps)
    assert_support_constants(oracle, P, S)


def test_olh_merged_table_is_the_full_table_grouped_by_support_pattern():
    full = OLH(d=3, epsilon=1.0, g=4)
    P_full, S_full = full.output_table()
    pattern = (S_full.astype(np.int64) << np.arange(3)).sum(axis=1)
    grouped = np.zeros((8, 3))
    np.add.at(grouped, pattern, P_full)
    P_m, S_m = full.output_table(merged=True)
    np.testing.assert_allclose(P_m, grouped, atol=1e-15)
    np.testing.assert_array_equal(S_m, ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool))


def test_a2_olh_default_range_and_explicit_g():
    assert [default_range(eps) for eps in (1.0, 2.0, 0.5)] == [4, 8, 3]
    assert OLH(d=10, epsilon=1.0).g == 0  # the parameter is stored as given
    olh = OLH(d=10, epsilon=1.0, g=2)
    assert olh.buckets == 2 and olh.p_star == pytest.approx(HR(d=10, epsilon=1.0).p_star, rel=1e-15)


def test_registry_validates_the_olh_parameter():
    plugins = builtin_plugins()
    assert plugins.create("oracle", "olh", {"g": 5}, d=10, epsilon=1.0).buckets == 5
    with pytest.raises(ParamError):
        plugins.create("oracle", "olh", {"g": -2}, d=10, epsilon=1.0)
    with pytest.raises(ParamError):
        plugins.create("oracle", "olh", {"buckets": 3}, d=10, epsilon=1.0)


def test_olh_reports_hash_the_own_value_under_the_users_seed():
    rng = np.random.default_rng(4)
    olh = OLH(d=20, epsilon=8.0, g=5)  # p_g - q_g = 0.99: almost every report is the own hash
    values = rng.integers(0, 20, 4000)
    reports = olh.perturb(values, rng)
    own = _hashing.hash_pairs(reports.seeds, _hashing.value_keys(values), 5)
    agree = (own == reports.y).mean()
    assert agree == pytest.approx(olh.p_star, abs=5.5 * np.sqrt(olh.p_star * (1 - olh.p_star) / 4000))
    assert np.unique(reports.seeds).size == 4000
