"""ibu over many iterations: every iterate stays on the simplex, and on a finite-output oracle its
fixed point is em's."""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins, ibu_postprocessor, simulated_estimate, zipf_counts

PLUGINS = builtin_plugins()


ORACLES = ("grr", "oue", "olh", "hr")


# -- the simplex ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("oracle", ORACLES)
def test_every_iterate_stays_on_the_simplex(oracle):
    est = simulated_estimate(oracle, zipf_counts(40, 800, seed=4), 0.5, seed=5)  # sparse: many negative base entries
    assert np.min(est.frequencies) < 0
    for maps in (1, 2, 3, 7, 50, 10_000):
        theta = ibu_postprocessor(tol=0.0, max_iter=maps).apply(est, np.random.default_rng(0)).frequencies
        assert np.all(theta >= 0) and abs(theta.sum() - 1.0) <= 1e-12, maps


# -- ibu on GRR and HR is em ----------------------------------------------------------------------------


@pytest.mark.parametrize("oracle", ["grr", "hr"])
@pytest.mark.parametrize("seed", [10, 11])
def test_ibu_on_a_finite_output_oracle_equals_em(oracle, seed):
    est = simulated_estimate(oracle, zipf_counts(30, 4000, seed=seed), 1.0, seed=seed)
    tight = {"tol": 1e-11, "max_iter": 100_000}
    a = ibu_postprocessor(**tight).apply(est, np.random.default_rng(0))
    b = PLUGINS.create("postprocessor", "em", tight).apply(est, np.random.default_rng(0))
    assert a.info["ibu_converged"] and b.info["em_converged"]
    # both stop when no component moves by tol/d; the fixed point is unique (L strictly concave here)
    np.testing.assert_allclose(a.frequencies, b.frequencies, rtol=0, atol=1e-7)
    # the per-item likelihood of the same counts has another maximizer: the test tells them apart
    per_item = ibu_postprocessor().apply(est.replace(report_histogram=None, channel=None), np.random.default_rng(0))
    assert np.max(np.abs(per_item.frequencies - a.frequencies)) > 1e-4
