"""Cao, Jia & Gong's normalization (``cao-norm``): exact properties and how it differs from Norm-Sub."""

from __future__ import annotations

import numpy as np
from support import oue_estimate, postprocessor

from ldpbench_plugins.postprocessors.cao_norm import cao_normalize

RNG = np.random.default_rng(2021)


def test_the_formula_on_a_hand_vector():
    out, uniform = cao_normalize(np.array([-0.1, 0.2, 0.5, 0.6]))
    # shifted by the minimum: 0, 0.3, 0.6, 0.7 (sum 1.6)
    np.testing.assert_allclose(out, [0.0, 0.3 / 1.6, 0.6 / 1.6, 0.7 / 1.6], rtol=0, atol=1e-15)
    assert not uniform


def test_non_negative_sums_to_one_keeps_the_order_and_zeroes_only_the_minimum():
    for _ in range(200):
        f = RNG.normal(1 / 50, 0.05, 50)
        out, _ = cao_normalize(f)
        assert out.min() == 0.0 and abs(out.sum() - 1.0) < 1e-12
        assert np.count_nonzero(out == 0.0) == np.count_nonzero(f == f.min())
        np.testing.assert_array_equal(np.argsort(out, kind="stable"), np.argsort(f, kind="stable"))
        # differences to the minimum are kept up to one common factor
        ratio = (f - f.min()) / out.clip(1e-300)
        np.testing.assert_allclose(ratio[out > 0], ratio[out > 0][0], rtol=1e-10)


def test_it_is_not_norm_sub_nor_norm_mul():
    f = np.array([-0.05, 0.1, 0.3, 0.7])
    est = oue_estimate(f)
    cao = postprocessor("cao-norm").apply(est, RNG).frequencies
    sub = postprocessor("norm-sub").apply(est, RNG).frequencies
    mul = postprocessor("norm-mul").apply(est, RNG).frequencies
    np.testing.assert_allclose(cao, (f + 0.05) / 1.25)
    assert np.abs(cao - sub).max() > 0.01 and np.abs(cao - mul).max() > 0.01


def test_all_equal_gives_uniform_and_says_so():
    est = oue_estimate(np.full(4, 0.3))
    out = postprocessor("cao-norm").apply(est, RNG)
    np.testing.assert_array_equal(out.frequencies, np.full(4, 0.25))
    assert out.info["cao-norm"] == {"uniform": True}
