"""Subset selection (plugins/oracles/ss.py): uniform subsets, reports that follow the output table, k."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from ldpbench.engine.simulate import MARGINAL_CLAIM, simulate
from ldpbench.errors import ParamError
from ldpbench_plugins.oracles.ss import SubsetSelection, default_subset_size, uniform_subsets


@pytest.mark.parametrize(("population", "k"), [(6, 2), (6, 5), (12, 10), (9, 1)])
def test_uniform_subsets_are_uniform(population, k):
    """Every k-subset equally likely (chi-square at 1e-6), on Floyd's path (k^2 <= 8 N) and on the
    random-key path (12, 10)."""
    draws = 60_000
    chosen = uniform_subsets(draws, population, k, np.random.default_rng(5))
    assert chosen.shape == (draws, k)
    assert np.all(np.sort(chosen, axis=1)[:, 1:] != np.sort(chosen, axis=1)[:, :-1])  # distinct
    masks = np.left_shift(1, chosen).sum(axis=1)
    _, observed = np.unique(masks, return_counts=True)
    assert observed.size == math.comb(population, k)
    assert st.chisquare(observed).pvalue > 1e-6


@pytest.mark.parametrize(("d", "k"), [(6, 2), (13, 11)])
def test_ss_reports_follow_the_output_table(d, k):
    """The per-user reports' frequencies against P(S | v) (chi-square at 1e-6), for one item, on
    both sampler paths."""
    oracle = SubsetSelection(d=d, epsilon=1.0, k=k)
    P, _ = oracle.output_table()
    v = 2
    reports = oracle.perturb(np.full(80_000, v), np.random.default_rng(3))
    observed = np.bincount(oracle.output_rows(reports), minlength=P.shape[0])
    assert st.chisquare(observed, P[:, v] * observed.sum()).pvalue > 1e-6


def test_ss_per_user_estimates_sum_to_one():
    """Every report holds exactly k items, and p* + (d - 1) q* = k, so the estimates sum to 1."""
    oracle = SubsetSelection(d=50, epsilon=1.0)
    counts = np.random.default_rng(0).integers(0, 40, size=50)
    est = simulate(oracle, counts, np.random.default_rng(1), "per-user")
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-9)
    assert oracle.p_star + 49 * oracle.q_star == pytest.approx(oracle.subset_size)


def test_ss_validates_k():
    assert SubsetSelection(d=10, epsilon=1.0, k=9).subset_size == 9
    for bad in (10, 11, -1):
        with pytest.raises(ParamError, match="k must be"):
            SubsetSelection(d=10, epsilon=1.0, k=bad)
    assert default_subset_size(2, 0.01) == 1 and default_subset_size(1000, 1.0) == round(1000 / (math.e + 1))
    assert SubsetSelection(d=20, epsilon=math.inf).p_star == 1.0


def test_ss_aggregate_estimates_sum_to_one_too():
    """The aggregate sampler keeps the joint law: every draw holds n k supports in all."""
    oracle = SubsetSelection(d=300, epsilon=1.0)
    counts = np.random.default_rng(0).integers(0, 40, size=300)
    rng = np.random.default_rng(2)
    for _ in range(5):
        c = oracle.sample_support_counts(counts, rng)
        assert c.sum() == counts.sum() * oracle.subset_size and c.min() >= 0
        est = simulate(oracle, counts, rng, "aggregate")
        assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-9) and est.warnings == ()


@pytest.mark.parametrize("name", ["ss", "cms", "pgr"])
def test_the_marginal_aggregate_path_is_declared_and_keeps_each_counts_law(name):
    """``aggregate: marginal`` (SS, CMS, PGR): declared approximate (tag, warning), the default
    stays exact; each count is Binomial(n_v, p*) + Binomial(n - n_v, q*): the mean and variance of
    every count over 3,000 draws within 5 standard errors (of the mean; of the sample variance,
    sqrt(2/R) relative), and the counts no longer sum to a constant (SS's exact ones sum to n k)."""
    from support import builtin_plugins

    plugins = builtin_plugins()
    d, counts = 12, np.array([900, 500, 300, 120, 60, 40, 30, 20, 15, 10, 5, 0])
    exact = plugins.create("oracle", name, {}, d=d, epsilon=1.0)
    marginal = plugins.create("oracle", name, {"aggregate": "marginal"}, d=d, epsilon=1.0)
    assert exact.tags().exact_aggregate and not marginal.tags().exact_aggregate
    assert exact.tags().exact_marginals and marginal.tags().exact_marginals  # the claim that still holds
    assert not simulate(exact, counts, np.random.default_rng(0)).warnings
    assert MARGINAL_CLAIM in simulate(marginal, counts, np.random.default_rng(0)).warnings[0]
    rng = np.random.default_rng(7)
    repeats = 3_000
    draws = np.array([marginal.sample_support_counts(counts, rng) for _ in range(repeats)], dtype=float)
    n, p, q = counts.sum(), marginal.p_star, marginal.q_star
    mean = counts * p + (n - counts) * q
    var = counts * p * (1 - p) + (n - counts) * q * (1 - q)
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 5 * np.sqrt(var / repeats))
    assert np.all(np.abs(draws.var(axis=0, ddof=1) / var - 1) <= 5 * np.sqrt(2 / repeats))
    assert np.ptp(draws.sum(axis=1)) > 0
    if name == "ss":
        k = exact.subset_size
        sums = [exact.sample_support_counts(counts, rng).sum() for _ in range(20)]
        assert set(sums) == {n * k}
