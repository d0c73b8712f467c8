"""The uniform baseline post-processor (plugins/postprocessors/uniform.py)."""

from __future__ import annotations

import numpy as np

import ldpbench


def test_uniform_is_one_over_d_whatever_was_reported(plugins):
    from ldpbench.types import Estimate

    f = np.array([0.7, -0.1, 0.3, 0.1])
    est = Estimate(frequencies=f, n=100, epsilon=1.0, variance=np.full(4, 0.01))
    got = plugins.create("postprocessor", "uniform", {}).apply(est, np.random.default_rng(0))
    assert np.array_equal(got.frequencies, np.full(4, 0.25)) and not np.any(got.variance)


def test_uniform_baseline_is_beaten_by_a_good_oracle_and_beats_a_hopeless_one(tmp_path):
    spec = {
        "name": "base-line",
        "seed": 9,
        "repeats": 5,
        "datasets": [{"zipf": {"d": 64, "n": 100000, "s": 1.5}}],
        "epsilons": [0.01, 4],
        "oracles": ["oue"],
        "pipelines": ["base", "uniform"],
        "metrics": ["mse"],
    }
    lb = ldpbench.run(spec, tmp_path / "r", workers=1).leaderboard
    best = {(r["epsilon"], r["pipeline"]) for r in lb.iter_rows(named=True) if r["rank"] == 1}
    assert best == {(0.01, "uniform"), (4.0, "base")}
