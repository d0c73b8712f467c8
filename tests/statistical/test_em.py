"""EM and its corrections on mixed-budget estimates (plugins/postprocessors/em.py;
docs/algorithms.md §8.1, §8.5): every output lies on the simplex, the structured (GRR) and generic
(channel operator) code paths agree, and ``scale`` multiplies the correction before projection."""

from __future__ import annotations

import numpy as np
import pytest
from support import mixed_estimate, postprocessor

from ldpbench.types import Channel
from ldpbench_plugins.postprocessors._em import Group, groups_of, newton_step, run_em


class Opaque(Channel):
    """A channel seen only through forward/backward (forces the generic code path)."""

    def __init__(self, inner: Channel):
        self.inner = inner
        self.n_items, self.n_reports = inner.n_items, inner.n_reports

    def forward(self, theta):
        return self.inner.forward(theta)

    def backward(self, w):
        return self.inner.backward(w)


def opaque(groups):
    """The finite-budget groups behind opaque channels (exact users keep the identity channel,
    whose observed information the structured path uses on purpose)."""
    return [g if g.exact else Group(g.histogram, Opaque(g.channel), g.n, g.epsilon) for g in groups]


@pytest.mark.parametrize("name", ["em", "em-corrected", "em-bootstrap"])
def test_outputs_lie_on_the_simplex(name):
    params = {"replicates": 3} if name == "em-bootstrap" else {}
    for seed in range(3):
        out = postprocessor(name, **params).apply(mixed_estimate(seed=seed), np.random.default_rng(seed))
        f = out.frequencies
        assert np.all(f >= 0) and abs(f.sum() - 1) <= 1e-12
        assert out.info["em_iterations"] >= 1 and "em_loglik" in out.info


# -- code paths ----------------------------------------------------------------------------------


def test_generic_channel_path_equals_the_grr_path():
    groups = groups_of(mixed_estimate(seed=6))
    a = run_em(groups, tol=1e-10, accelerate=False)
    b = run_em(opaque(groups), tol=1e-10, accelerate=False)
    assert a.iterations == b.iterations
    assert np.allclose(a.theta, b.theta, atol=1e-13)
    c = run_em(opaque(groups), tol=1e-10)
    assert np.allclose(a.theta, c.theta, atol=1e-7)
    da, la, _ = newton_step(groups, a.theta, a.m)
    db, lb, _ = newton_step(opaque(groups), a.theta, a.m)
    assert la == pytest.approx(lb, rel=1e-7)
    assert np.allclose(da, db, atol=1e-7 * np.max(np.abs(da)))


def test_scale_multiplies_the_correction_before_projection():
    est = mixed_estimate(d=40, seed=11)
    em = postprocessor("em").apply(est, np.random.default_rng(0)).frequencies
    one = postprocessor("em-corrected").apply(est, np.random.default_rng(0)).frequencies - em
    three = postprocessor("em-corrected", scale=3.0).apply(est, np.random.default_rng(0)).frequencies - em
    zero = postprocessor("em-corrected", scale=0.0).apply(est, np.random.default_rng(0)).frequencies - em
    assert np.allclose(zero, 0, atol=1e-15)
    assert np.allclose(three, 3 * one, rtol=1e-6, atol=1e-12)  # no clipping at these sizes
