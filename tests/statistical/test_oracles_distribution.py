"""Both simulation paths of every oracle follow the exact law (docs/algorithms.md §8.2).

For tiny populations the exact law of the support counts (or of the report histogram) is
enumerated from the oracle's exact output table; 200,000 draws of each sampler are compared with
it by Pearson's chi-square (cells with expected count < 5 merged), pass if p >= 1e-6. Samplers are
called in batches where the oracle offers a batched form (the same code as the single draw); the
public methods are also called one draw at a time, 5,000 times (the conformance kit does the same).

Seeds come from the ``ldpbench_rng`` fixture of ldpbench's pytest plugin (``--ldpbench-seed=N``
re-runs everything with other seeds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from ldpbench.testing.stats import categorical_law, exact_distribution_test, law_of_sum
from ldpbench_plugins.oracles import _hadamard, _hashing
from ldpbench_plugins.oracles._common import independent_binomials
from ldpbench_plugins.oracles.grr import GRR, mixture_histograms
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE

M = 200_000
M_LOOP = 5_000


def support_law(oracle, counts):
    P, S = oracle.output_table()
    per_item = [categorical_law(S.astype(np.int64), P[:, v]) for v in range(oracle.d)]
    return law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))


def histogram_law(oracle, counts):
    P, _ = oracle.output_table()  # GRR and HR: table rows are the reports
    eye = np.eye(P.shape[0], dtype=np.int64)
    per_item = [categorical_law(eye, P[:, v]) for v in range(oracle.d)]
    return law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))


def per_user_support(oracle, counts, rng, m=M):
    """m populations' support counts through perturb() and the table rows of the reports."""
    _, S = oracle.output_table()
    values = np.repeat(np.arange(oracle.d), counts)
    rows = oracle.output_rows(oracle.perturb(np.tile(values, m), rng))
    return S[rows].reshape(m, values.size, oracle.d).sum(axis=1)


def per_user_histograms(oracle, counts, rng, size, m=M):
    values = np.repeat(np.arange(oracle.d), counts)
    y = np.asarray(oracle.perturb(np.tile(values, m), rng)).reshape(m, values.size)
    flat = (np.arange(m)[:, None] * size + y).ravel()
    return np.bincount(flat, minlength=m * size).reshape(m, size)


def test_grr_exact_law(ldpbench_rng):
    grr, counts, rng = GRR(d=3, epsilon=1.0), np.array([2, 1, 1]), ldpbench_rng
    law = support_law(grr, counts)
    assert law == pytest.approx(histogram_law(grr, counts))
    shortcut = mixture_histograms(np.tile(counts, (M, 1)), grr.keep_probability, rng)
    exact_distribution_test(shortcut, law, label=" GRR mixture shortcut").check()
    exact_distribution_test(per_user_histograms(grr, counts, rng, 3), law, label=" GRR per-user").check()
    loop = np.array([grr.sample_report_histogram(counts, rng) for _ in range(M_LOOP)])
    exact_distribution_test(loop, law, label=" GRR sample_report_histogram").check()


def test_oue_exact_law(ldpbench_rng):
    oue, counts, rng = OUE(d=3, epsilon=1.0), np.array([1, 1, 1]), ldpbench_rng
    law = support_law(oue, counts)
    # the product of Binomial(n_v, 1/2) * Binomial(n - n_v, q*) over v, computed independently
    q = oue.q_star
    b1 = st.binom.pmf(np.arange(2), 1, 0.5)
    b2 = st.binom.pmf(np.arange(3), 2, q)
    per_value = np.convolve(b1, b2)
    for key, prob in law.items():
        assert prob == pytest.approx(np.prod([per_value[k] for k in key]), rel=1e-12)
    shortcut = independent_binomials(np.tile(counts, (M, 1)), 0.5, q, rng)
    exact_distribution_test(shortcut, law, label=" OUE shortcut").check()
    exact_distribution_test(per_user_support(oue, counts, rng), law, label=" OUE per-user").check()
    loop = np.array([oue.sample_support_counts(counts, rng) for _ in range(M_LOOP)])
    exact_distribution_test(loop, law, label=" OUE sample_support_counts").check()


def test_olh_exact_law_of_the_idealized_protocol(ldpbench_rng):
    olh, counts, rng = OLH(d=3, epsilon=1.0, g=3), np.array([1, 1, 1]), ldpbench_rng
    P, _ = olh.output_table()
    assert P.shape[0] == 3**3 * 3  # every function D -> [g] enumerated
    law = support_law(olh, counts)
    shortcut = independent_binomials(np.tile(counts, (M, 1)), olh.p_star, olh.q_star, rng)
    exact_distribution_test(shortcut, law, label=" OLH idealized shortcut").check()
    # A faithful sampler with a uniformly random function per user (the idealized protocol).
    values = np.tile(np.repeat(np.arange(3), counts), M)
    table = rng.integers(0, 3, size=(values.size, 3))
    own = table[np.arange(values.size), values]
    keep = rng.random(values.size) < olh.p_star - math.exp(-1.0) * olh.p_star
    y = np.where(keep, own, rng.integers(0, 3, values.size))
    random_function = (table == y[:, None]).reshape(M, 3, 3).sum(axis=1)
    exact_distribution_test(random_function, law, label=" OLH random-function sampler").check()
    loop = np.array([olh.sample_support_counts(counts, rng) for _ in range(M_LOOP)])
    exact_distribution_test(loop, law, label=" OLH sample_support_counts").check()


def test_olh_real_hash_per_user_path_is_indistinguishable_here(ldpbench_rng):
    """Not among the checks of docs/algorithms.md §8.2 (cross-value independence of a real hash is
    approximate), but the splitmix64 family passes the same exact-law test at this size."""
    olh, counts, rng = OLH(d=3, epsilon=1.0, g=3), np.array([1, 1, 1]), ldpbench_rng
    exact_distribution_test(
        per_user_support(olh, counts, rng), support_law(olh, counts), label=" OLH real hash"
    ).check()


@pytest.mark.parametrize("g", [2, 4, 56])
def test_olh_real_hash_marginals(g, ldpbench_rng):
    """|q_hat - 1/g| <= 5.5 sqrt(q (1 - q) / M) over M >= 10^6 (user, value) pairs; same for p*."""
    rng = ldpbench_rng
    d, m = 21, 50_000
    olh = OLH(d=d, epsilon=math.log(g - 1) if g > 2 else 0.5, g=g)
    support = olh.support_counts(olh.perturb(np.zeros(m, dtype=np.int64), rng))
    pairs = m * (d - 1)
    q = 1 / g
    q_hat = support[1:].sum() / pairs
    assert abs(q_hat - q) <= 5.5 * math.sqrt(q * (1 - q) / pairs)
    p = olh.p_star
    assert abs(support[0] / m - p) <= 5.5 * math.sqrt(p * (1 - p) / m)
    # every bucket of one value's hash is equally likely
    seeds = _hashing.random_seeds(200_000, rng)
    buckets = _hashing.hash_pairs(seeds, _hashing.value_keys(np.full(seeds.size, 7)), g)
    law = {(b,): 1 / g for b in range(g)}
    exact_distribution_test(buckets[:, None], law, label=f" hash buckets, g={g}").check()


def test_hr_exact_law_small(ldpbench_rng):
    hr, counts, rng = HR(d=3, epsilon=1.0), np.array([1, 1, 1]), ldpbench_rng
    assert hr.size == 4
    law = histogram_law(hr, counts)
    exact_distribution_test(per_user_histograms(hr, counts, rng, 4), law, label=" HR per-user").check()
    tree = _hadamard.exact_histograms(np.tile(counts, (M, 1)), hr.bits, hr.p_star, rng)
    exact_distribution_test(tree, law, label=" HR splitting sampler").check()
    loop = np.array([hr.sample_report_histogram(counts, rng) for _ in range(M_LOOP)])
    exact_distribution_test(loop, law, label=" HR sample_report_histogram").check()
    support = np.array([hr.support_counts_from_histogram(h) for h in loop])
    exact_distribution_test(support, support_law(hr, counts), label=" HR support counts").check()


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_hr_splitting_sampler_exact_law_three_levels(eps, ldpbench_rng):
    """K = 8 (three levels of splitting, items merging at each level, forced and free states)."""
    hr, counts, rng = HR(d=6, epsilon=eps), np.array([2, 0, 1, 1, 0, 2]), ldpbench_rng
    law = histogram_law(hr, counts)
    tree = _hadamard.exact_histograms(np.tile(counts, (M, 1)), hr.bits, hr.p_star, rng)
    exact_distribution_test(tree, law, label=f" HR splitting sampler, eps={eps}").check()


@pytest.mark.parametrize("n", [1, 5, 64, 65, 200, 700, 3000])
def test_binomial_half_exact_law(n, ldpbench_rng):
    draws = _hadamard.binomial_half(np.full(M, n, dtype=np.int64), ldpbench_rng)
    law = {(k,): float(p) for k, p in enumerate(st.binom.pmf(np.arange(n + 1), n, 0.5)) if p > 0}
    exact_distribution_test(draws[:, None], law, label=f" Binomial({n}, 1/2)").check()
