"""GRR (plugins/oracles/grr.py; docs/algorithms.md §8.1): the estimate of hand-made reports, sums to one, the mixture sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.simulate import simulate
from ldpbench_plugins.oracles.grr import GRR, mixture_histograms


def test_a6_round_trip_with_hand_made_reports():
    grr = GRR(d=3, epsilon=math.log(2))
    reports = np.array([0, 0, 1, 2])
    c = grr.support_counts(reports)
    np.testing.assert_array_equal(c, [2, 1, 1])
    p, q = 2 / 4, 1 / 4  # e = 2, d = 3
    est = grr.estimate(c, 4)
    want = (c / 4 - q) / (p - q)
    np.testing.assert_allclose(est.frequencies, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.frequencies, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(est.counts, 4 * want, rtol=1e-12, atol=1e-12)
    assert est.n == 4 and est.p_star == pytest.approx(p) and est.q_star == pytest.approx(q)


def test_a7_grr_estimates_sum_to_one_and_norm_is_a_no_op():
    plugins = builtin_plugins()
    rng = np.random.default_rng(7)
    counts = rng.multinomial(5000, rng.dirichlet(np.ones(40)))
    norm = plugins.create("postprocessor", "norm") if "norm" in plugins.registry("postprocessor") else None
    for eps in (0.5, 1.0, 4.0):
        oracle = GRR(d=40, epsilon=eps)
        for path in ("aggregate", "per-user"):
            for _ in range(5):
                est = simulate(oracle, counts, rng, path)
                assert abs(est.frequencies.sum() - 1) <= 1e-12
                if norm is not None:
                    np.testing.assert_allclose(norm.apply(est, rng).frequencies, est.frequencies, atol=1e-12)


def test_grr_mixture_batches_and_keeps_n():
    rng = np.random.default_rng(9)
    counts = rng.integers(0, 30, (6, 12))
    hist = mixture_histograms(counts, GRR(d=12, epsilon=1.0).keep_probability, rng)
    assert hist.shape == (6, 12)
    np.testing.assert_array_equal(hist.sum(axis=1), counts.sum(axis=1))
    one = GRR(d=12, epsilon=1.0).sample_report_histogram(counts[0], rng)
    assert one.shape == (12,) and one.sum() == counts[0].sum()
