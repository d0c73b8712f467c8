"""Blender's opt-in estimate ([A17]; plugins/protocols/_blender_optin.py): cut to m, the rest folded into the star."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.protocols._blender_optin import estimate_optin, optin_variance


def test_estimate_optin_cuts_to_m_and_folds_the_rest_into_star():
    rng = np.random.default_rng(1)
    t_counts = np.array([500, 300, 200, 100, 50, 0, 850])
    est = estimate_optin(t_counts, np.array([0, 1, 2, 3, 4]), 4, 1, 3, rng)
    np.testing.assert_array_equal(est.records, [0, 1, 2])
    assert est.n_t == 2000
    assert est.p.sum() + est.p_star == pytest.approx(1.0, abs=10 * 6 * 0.5 / 2000)
    assert est.p_star == pytest.approx(1000 / 2000, abs=5 * 3 * 0.5 / 2000)
    np.testing.assert_allclose(est.variance, optin_variance(est.p, 2000, 0.5))
    # Theorem 4 (Bessel-corrected), by hand for one value
    assert optin_variance(0.25, 2000, 0.5) == pytest.approx(0.25 * 0.75 / 1999 + 2 * 0.25 / (2000 * 1999))
