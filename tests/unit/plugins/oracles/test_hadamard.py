"""Unit tests of the oracles' samplers: sparse OUE reports, the OLH hash family, HR's samplers."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles import _hadamard, _hashing
from ldpbench_plugins.oracles.grr import GRR, mixture_histograms
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE, bernoulli_positions


def test_bernoulli_positions_are_sorted_distinct_and_in_range():
    rng = np.random.default_rng(0)
    for length, q in [(0, 0.3), (10, 0.0), (10, 1.0), (1, 0.5), (100_000, 0.01), (50_000, 0.45)]:
        pos = bernoulli_positions(length, q, rng)
        assert pos.dtype == np.int64
        assert np.all(np.diff(pos) > 0) and (pos.size == 0 or (pos[0] >= 0 and pos[-1] < length))
        if q in (0.0, 1.0):
            assert pos.size == (length if q == 1.0 else 0)


@pytest.mark.slow
@pytest.mark.parametrize("q", [0.05, 0.3])  # geometric gaps / one uniform per position
def test_bernoulli_positions_hit_each_position_with_probability_q(q):
    rng = np.random.default_rng(1)
    length, reps = 40, 20_000
    hits = np.zeros(length)
    for _ in range(reps):
        hits[bernoulli_positions(length, q, rng)] += 1
    z = (hits - reps * q) / np.sqrt(reps * q * (1 - q))
    assert np.abs(z).max() < 5.5


def test_oue_sparse_reports():
    rng = np.random.default_rng(2)
    oue = OUE(d=50, epsilon=1.0)
    values = rng.integers(0, 50, 3000)
    reports = oue.perturb(values, rng)
    assert reports.n_users == 3000
    keys = reports.user * 50 + reports.item
    assert np.unique(keys).size == keys.size, "a (user, item) pair appears twice"
    bits = reports.dense(50)
    np.testing.assert_array_equal(bits.sum(axis=0), oue.support_counts(reports))
    own = bits[np.arange(3000), values]
    assert abs(own.mean() - 0.5) < 5.5 * np.sqrt(0.25 / 3000)
    others = (bits.sum() - own.sum()) / (3000 * 49)
    assert abs(others - oue.q_star) < 5.5 * np.sqrt(oue.q_star * (1 - oue.q_star) / (3000 * 49))


def test_oue_chunk_size_bounds_memory():
    assert OUE(d=10, epsilon=1.0).chunk_users == 1 << 20
    big = OUE(d=41_270, epsilon=1.0)
    assert big.chunk_users * (0.5 + 41_269 * big.q_star) <= 1.01 * (1 << 22)
    assert OUE(d=10**7, epsilon=0.01).chunk_users >= 1


def test_hash_family_evaluations_agree():
    rng = np.random.default_rng(3)
    keys = _hashing.value_keys(np.arange(37))
    seeds = _hashing.random_seeds(5000, rng)
    table = _hashing.hash_table(seeds, keys, 7)
    assert table.min() >= 0 and table.max() < 7
    items = rng.integers(0, 37, 5000)
    np.testing.assert_array_equal(_hashing.hash_pairs(seeds, keys[items], 7), table[np.arange(5000), items])
    y = rng.integers(0, 7, 5000)
    np.testing.assert_array_equal(_hashing.matches_per_value(seeds, y, keys, 7), (table == y[:, None]).sum(axis=0))


def test_olh_reports_hash_the_own_value_under_the_users_seed():
    rng = np.random.default_rng(4)
    olh = OLH(d=20, epsilon=8.0, g=5)  # p_g - q_g = 0.99: almost every report is the own hash
    values = rng.integers(0, 20, 4000)
    reports = olh.perturb(values, rng)
    own = _hashing.hash_pairs(reports.seeds, _hashing.value_keys(values), 5)
    agree = (own == reports.y).mean()
    assert agree == pytest.approx(olh.p_star, abs=5.5 * np.sqrt(olh.p_star * (1 - olh.p_star) / 4000))
    assert np.unique(reports.seeds).size == 4000


@pytest.mark.slow
def test_binomial_half_edge_sizes():
    rng = np.random.default_rng(5)
    n = np.array([0, 1, 63, 64, 65, 128, 129, 640, 641, 10_000], dtype=np.int32)
    draws = np.array([_hadamard.binomial_half(n, rng) for _ in range(4000)])
    assert draws.dtype == np.int32
    assert np.all(draws >= 0) and np.all(draws <= n)
    assert np.all(draws[:, 0] == 0)
    z = (draws[:, 1:].mean(axis=0) - n[1:] / 2) / np.sqrt(n[1:] / 4 / 4000)
    assert np.abs(z).max() < 5.5
    ratio = draws[:, 1:].var(axis=0, ddof=1) / (n[1:] / 4)
    assert np.all((ratio > 0.85) & (ratio < 1.15))


def test_hr_parity_flip_sampler_lands_on_the_right_side():
    rng = np.random.default_rng(6)
    k, values = 5, rng.integers(0, 31, 10_000)
    u = rng.integers(0, 32, 10_000)
    for inside in (True, False):
        y = _hadamard.hr_output(values + 1, u, np.full(10_000, inside))
        even = (np.bitwise_count((values + 1) & y) % 2) == 0
        assert np.all(even == inside)
    assert _hadamard.per_user_reports(values, k, 0.7, rng).max() < 32


def test_hr_splitting_keeps_every_user_and_batches():
    rng = np.random.default_rng(7)
    for d in (1, 2, 3, 4, 7, 8, 100, 511, 512):
        hr = HR(d=d, epsilon=1.0)
        counts = rng.integers(0, 50, d)
        hist = _hadamard.exact_histograms(counts, hr.bits, hr.p_star, rng)
        assert hist.shape == (hr.size,) and hist.dtype == np.int64 and hist.sum() == counts.sum()
        batch = _hadamard.exact_histograms(np.tile(counts, (4, 1)), hr.bits, hr.p_star, rng)
        assert batch.shape == (4, hr.size) and np.all(batch.sum(axis=1) == counts.sum())
    with pytest.raises(ValueError):
        _hadamard.exact_histograms(np.ones(8, dtype=np.int64), 3, 0.5, rng)


def test_hr_splitting_at_budget_infinity_stays_on_the_cosets():
    """With p_in = 1 every report of item v lies in C_v: the histogram is supported there."""
    rng = np.random.default_rng(8)
    counts = np.zeros(20, dtype=np.int64)
    counts[6] = 10_000
    hist = _hadamard.exact_histograms(counts, 5, 1.0, rng)
    y = np.arange(32)
    in_c = (np.bitwise_count(7 & y) % 2) == 0
    assert hist[~in_c].sum() == 0 and hist[in_c].min() > 0


def test_hr_sampler_choice():
    assert _hadamard.use_per_user(100, 3, 2)
    assert not _hadamard.use_per_user(8_019_015, 41_270, 16)
    hr = HR(d=64, epsilon=1.0)
    counts = np.full(64, 1000)
    assert not _hadamard.use_per_user(int(counts.sum()), 64, hr.bits)
    assert hr.sample_report_histogram(counts, np.random.default_rng(0)).sum() == 64_000


def test_grr_mixture_batches_and_keeps_n():
    rng = np.random.default_rng(9)
    counts = rng.integers(0, 30, (6, 12))
    hist = mixture_histograms(counts, GRR(d=12, epsilon=1.0).keep_probability, rng)
    assert hist.shape == (6, 12)
    np.testing.assert_array_equal(hist.sum(axis=1), counts.sum(axis=1))
    one = GRR(d=12, epsilon=1.0).sample_report_histogram(counts[0], rng)
    assert one.shape == (12,) and one.sum() == counts[0].sum()
