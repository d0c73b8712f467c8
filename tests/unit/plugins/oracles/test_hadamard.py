"""HR's samplers (plugins/oracles/_hadamard.py): the parity flip, the splitting sampler and the choice between them."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles import _hadamard
from ldpbench_plugins.oracles.hr import HR


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
