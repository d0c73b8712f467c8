"""Longitudinal SPL and SMP (plugins/protocols/l_multidim.py): per attribute and per round, the
estimates against the memoized chain's variance (SPL at eps / a over all users; SMP at eps over the
users who sampled the attribute, the sample kept over rounds), and their accounting."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom
from support_multidim import SIZES, population

from ldpbench.types.attributes import Attributes, tuple_population
from ldpbench.types.rounds import round_streams
from ldpbench_plugins.datasets.attributes import redraw_rows
from ldpbench_plugins.protocols.l_multidim import LSMP, LSPL

T, EPS = 3, 2.0


def rounds_population(n: int = 3000):
    """``support_multidim``'s users in round 0; 30% take another user's row per round (fixed seed)."""
    base = population(n).attributes
    seq = redraw_rows(base.rows, T, 0.3, round_streams(np.random.default_rng(11), T))
    return tuple_population(Attributes(base.names, base.sizes, base.rows, None, seq))


def truth(pop, j: int, t: int) -> np.ndarray:
    return np.bincount(pop.attributes.round_items(j)[t], minlength=SIZES[j]) / pop.n


def spl_variance(proto, j, n, f):
    return proto.chain(SIZES[j], EPS / 2).variance(n, f)


def smp_variance(proto, j, n, f):
    """E over n_j ~ Bin(n, 1/2) of the chain's variance over n_j users, plus their own spread."""
    k = np.arange(1, n + 1)
    w = binom.pmf(k, n, 0.5)
    k, w = k[w > 1e-12], w[w > 1e-12]
    chain = proto.chain(SIZES[j], EPS)
    per = np.array([chain.variance(int(m), f) for m in k]) + f * (1 - f) * (n - k)[:, None] / (k[:, None] * (n - 1))
    return (w[:, None] * per).sum(axis=0) / w.sum()


@pytest.mark.parametrize(("cls", "theory"), [(LSPL, spl_variance), (LSMP, smp_variance)])
@pytest.mark.parametrize("oracle", ["l-grr", "l-osue"])
@pytest.mark.parametrize(("simulation", "repeats", "tol"), [("aggregate", 300, 0.35), ("per-user", 100, 0.6)])
def test_every_round_of_every_attribute_is_unbiased_with_the_chains_variance(
    cls, theory, oracle, simulation, repeats, tol
):
    # summed sample variance over an attribute's items: sd <= 0.082 (R = 300), 0.142 (R = 100);
    # tolerances > 4 sigma (6 (attribute, round) pairs checked). Means within 5 sigma per item. A
    # chain at eps instead of eps / a (SPL) or an estimate over n instead of n_j (SMP) fails both
    pop, proto = rounds_population(), cls(oracle=oracle)
    rng = np.random.default_rng(3)
    runs = [proto.run(pop, EPS, rng, simulation=simulation) for _ in range(repeats)]
    for j, name in enumerate(pop.attributes.names):
        for t in range(T):
            est = np.stack([r[f"{name}:round-{t + 1}"].frequencies for r in runs])
            f = truth(pop, j, t)
            expected = theory(proto, j, pop.n, f)
            assert np.all(np.abs(est.mean(axis=0) - f) <= 5 * np.sqrt(expected / repeats)), (name, t)
            ratio = est.var(axis=0, ddof=1).sum() / expected.sum()
            assert abs(ratio - 1) < tol, (name, t, ratio)


def test_smp_samples_one_attribute_per_user_for_every_round():
    pop = rounds_population(1000)
    out = LSMP(oracle="l-grr").run(pop, EPS, np.random.default_rng(0))
    assert sorted(out) == sorted(
        f"{a}:{s}" for a in ("x", "y") for s in ("round-1", "round-2", "round-3", "rounds-mean")
    )
    nx = {out[f"x:round-{t}"].n for t in (1, 2, 3)}
    ny = {out[f"y:round-{t}"].n for t in (1, 2, 3)}
    assert len(nx) == len(ny) == 1 and nx.pop() + ny.pop() == 1000  # the same users every round


def test_spl_splits_both_budgets_and_the_accounting_states_them():
    proto = LSPL(oracle="l-grr", alpha=0.4)
    chain = proto.chain(3, EPS / 2)
    assert chain.eps_inf == pytest.approx(EPS / 2) and chain.eps_1 == pytest.approx(0.4 * EPS / 2)
    (row,) = proto.privacy_accounting(EPS)
    assert row["epsilon_inf"] == EPS and row["epsilon_1"] == pytest.approx(0.4 * EPS)
    assert "epsilon_inf / a" in row["on_change"]


def test_a_tuple_population_without_rounds_is_one_round():
    out = LSPL(oracle="l-oue").run(population(500), EPS, np.random.default_rng(0))
    assert sorted(out) == ["x:round-1", "x:rounds-mean", "y:round-1", "y:rounds-mean"]


@pytest.mark.parametrize("oracle", ["l-grr", "l-osue"])
def test_one_rounds_whole_report_is_exactly_eps_1_ldp(oracle):
    from ldpbench_plugins.protocols._multidim import attribute_log_ratio, max_log_ratio

    spl, smp = LSPL(oracle=oracle, alpha=0.5), LSMP(oracle=oracle, alpha=0.5)
    P = spl.report_table((2, 3), EPS)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert max_log_ratio(P) == pytest.approx(0.5 * EPS)  # eps_1 / a per attribute, composed
    assert attribute_log_ratio(P, (2, 3)) == pytest.approx(0.5 * EPS / 2)
    Q = smp.report_table((2, 3), EPS)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0)
    assert max_log_ratio(Q) == pytest.approx(0.5 * EPS)
