"""A third-party prior family (plugins/priors/_base.py's base class) plugs into calibrate through the same hook."""

from __future__ import annotations

import math

import numpy as np

from ldpbench import build_plugins, hookimpl
from ldpbench_plugins.priors import PriorFamilyBase


class Triangular(PriorFamilyBase):
    """A third-party family: weight falling linearly from lo to ``top``."""

    name = "triangular"
    parameter_names = ("top",)

    def log_weight(self, k, theta):
        k = np.asarray(k, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(np.clip(1.0 - k / float(theta[0]), 0.0, None))

    def rough_points(self, theta):
        return (float(theta[0]),)

    def fit_mean_variance(self, estimates, noise_var, support):
        return (3.0 * max(float(np.mean(estimates)), 1.0),)  # mean of the law is top / 3


class TriangularPlugin:
    __name__ = "triangular-plugin"

    @staticmethod
    @hookimpl
    def ldpbench_register_prior_families(registry):
        registry.register(Triangular)


def test_a_third_party_family_plugs_into_calibrate():
    from ldpbench.types import Estimate

    plugins = build_plugins(extra=[TriangularPlugin()])
    assert "triangular" in plugins.registry("prior")
    cal = plugins.create("postprocessor", "calibrate", {"prior": "triangular"})
    n, d = 100_000, 400
    rng = np.random.default_rng(3)
    true = rng.integers(0, 500, d)
    var = 40.0**2 / n**2
    est = Estimate(true / n + rng.normal(0, math.sqrt(var), d), n, 2.0, "hand", 0.5, 0.1, np.full(d, var))
    out = cal.apply(est, rng)
    assert out.info["calibrate"]["prior"] == "triangular"
    counts = out.frequencies * n
    assert counts.min() >= 0 and counts.max() <= out.info["calibrate"]["params"]["top"]
