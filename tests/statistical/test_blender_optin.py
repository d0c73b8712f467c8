"""Blender's opt-in side and blending by simulation (docs/algorithms.md §8.6)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldpbench_plugins.protocols._blender_client import estimate_client, local_alg_constants, report_histogram_aggregate
from ldpbench_plugins.protocols._blender_headlist import HeadList, create_head_list, laplace_scale, threshold
from ldpbench_plugins.protocols._blender_optin import estimate_optin
from ldpbench_plugins.protocols.blender import blend

EPS, DELTA = 4.0, 1e-5


def test_optin_estimates_are_unbiased_with_theorem4_variance():
    """F3: z-test of p_O and per-record chi-square bounds for Var = p(1-p)/|D_T| + 2 b^2/|D_T|^2."""
    rng = np.random.default_rng(31)
    p = rng.dirichlet(np.ones(40))
    n_t, trials = 2000, 400
    candidates = np.arange(30)  # the last 10 records go to <*, *>
    b = laplace_scale(EPS)
    est = np.empty((trials, 31))
    for i in range(trials):
        e = estimate_optin(rng.multinomial(n_t, p), candidates, EPS, 1, 30, rng)
        order = np.argsort(e.records)
        est[i, :30] = e.p[order]
        est[i, 30] = e.p_star
    truth = np.append(p[:30], p[30:].sum())
    var = truth * (1 - truth) / n_t + 2 * b**2 / n_t**2
    z = (est.mean(axis=0) - truth) / np.sqrt(var / trials)
    assert np.abs(z).max() <= 5.5
    ratio = est.var(axis=0, ddof=1) / var
    assert np.all((ratio >= 0.674) & (ratio <= 1.413)), ratio


def test_blending_beats_both_inputs():
    """F4: the blended estimate's empirical variance <= 1.05 x the smaller input variance."""
    rng = np.random.default_rng(41)
    parents = np.repeat(np.arange(6), 4)
    hl = HeadList.build(np.arange(20), parents)  # 5 queries x 4 records listed, 1 query outside
    f = np.arange(1, parents.size + 1) ** -1.2  # opt-in wins on rare records, clients on frequent ones
    f = f[rng.permutation(f.size)] / f.sum()
    slot_p = np.bincount(hl.slot_of(parents), weights=f, minlength=hl.n_slots)
    c = local_alg_constants(EPS, DELTA, 1, 0.85, hl)
    trials, n_t, n_c = 400, 2000, 100_000
    out = {"o": [], "c": [], "b": []}
    for _ in range(trials):
        o = estimate_optin(rng.multinomial(n_t, f), np.arange(20), EPS, 1, 20, rng)
        order = np.argsort(o.records)
        cl = estimate_client(report_histogram_aggregate(rng.multinomial(n_c, slot_p), hl, c, rng), hl, c)
        pc, vc = cl.p_slot[hl.record_slots], cl.variance_slot[hl.record_slots]
        pb, _, _ = blend(o.p[order], o.variance[order], pc, vc)
        out["o"].append(o.p[order])
        out["c"].append(pc)
        out["b"].append(pb)
    v = {k: np.var(np.array(x), axis=0, ddof=1) for k, x in out.items()}
    assert np.all(v["b"] <= 1.05 * np.minimum(v["o"], v["c"]))
    # and the blend really mixes: on some records each input alone is the better one
    assert np.any(v["o"] < v["c"]) and np.any(v["c"] < v["o"])


def test_head_list_creation_thresholds_noisy_counts():
    """F5: counts >= tau + 10 b kept and <= tau - 10 b dropped, except with prob e^-10/2 each;
    inclusion rate at count c equals P(c + Laplace(b) > tau) (z-test)."""
    rng = np.random.default_rng(51)
    tau, b = threshold(EPS, DELTA), laplace_scale(EPS)
    high, low = int(np.ceil(tau + 10 * b)), int(np.floor(tau - 10 * b))
    assert low >= 1
    counts = np.concatenate([np.full(5000, high), np.full(5000, low)])
    kept = create_head_list(counts, EPS, DELTA, 1, rng)
    misses = (5000 - np.sum(kept < 5000)) + np.sum(kept >= 5000)
    assert misses <= 4  # expected 0.23 (Poisson): P(> 4) < 1e-5
    for c in (6, 7, 8):
        counts = np.full(10_000, c)
        rate = create_head_list(counts, EPS, DELTA, 1, rng).size / 10_000
        expected = stats.laplace.sf(tau - c, scale=b)
        assert abs(rate - expected) <= 5.5 * np.sqrt(expected * (1 - expected) / 10_000)


def test_user_split_is_a_uniform_random_subset():
    """S, T and C partition the users; S's record counts are hypergeometric: E = n_S f, z-test."""
    from ldpbench_plugins.protocols.blender import split_users

    rng = np.random.default_rng(71)
    counts = rng.integers(0, 400, 60)
    n = int(counts.sum())
    n_s, n_t, trials = 900, 100, 400
    s_sum = np.zeros(counts.size)
    for _ in range(trials):
        s, t, c = split_users(counts, n_s, n_t, rng)
        assert s.sum() == n_s and t.sum() == n_t and np.all(c >= 0)
        np.testing.assert_array_equal(s + t + c, counts)
        s_sum += s
    f = counts / n
    var = n_s * f * (1 - f) * (n - n_s) / (n - 1)  # hypergeometric
    z = (s_sum / trials - n_s * f) / np.sqrt(np.where(var > 0, var, 1) / trials)
    assert np.abs(z).max() <= 5.5
