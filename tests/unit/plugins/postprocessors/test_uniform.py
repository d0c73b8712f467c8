"""The uniform baseline post-processor and the metrics' ``scale: n``."""

from __future__ import annotations

import numpy as np
import pytest

import ldpbench


@pytest.fixture(scope="module")
def plugins():
    from ldpbench import build_plugins

    return build_plugins(())


def test_uniform_is_one_over_d_whatever_was_reported(plugins):
    from ldpbench.types import Estimate

    f = np.array([0.7, -0.1, 0.3, 0.1])
    est = Estimate(frequencies=f, n=100, epsilon=1.0, variance=np.full(4, 0.01))
    got = plugins.create("postprocessor", "uniform", {}).apply(est, np.random.default_rng(0))
    assert np.array_equal(got.frequencies, np.full(4, 0.25)) and not np.any(got.variance)


def test_scale_n_makes_the_error_independent_of_the_number_of_users(tmp_path):
    """n * MSE of Base is the per-user variance constant: equal at n = 10^4 and 10^5 (to noise)."""
    spec = {
        "name": "scale",
        "seed": 5,
        "repeats": 10,
        "datasets": [{"zipf": {"d": 256, "n": 10000, "s": 1.1}}, {"zipf": {"d": 256, "n": 100000, "s": 1.1}}],
        "epsilons": [1],
        "oracles": ["oue"],
        "pipelines": ["base"],
        "metrics": ["mse", {"mse": {"scale": "n"}}, {"l1": {"scale": "n"}}],
    }
    lb = ldpbench.run(spec, tmp_path / "r", workers=1).leaderboard
    means = {(r["dataset"], r["metric"]): r["mean"] for r in lb.iter_rows(named=True)}
    datasets = list(dict.fromkeys(k[0] for k in means))  # spec order: n = 10^4, then 10^5
    a, b = ({met: means[(ds, met)] for (d2, met) in means if d2 == ds} for ds in datasets)
    assert a["mse"] / b["mse"] == pytest.approx(10, rel=0.1)
    assert a["mse(scale=n)"] == pytest.approx(b["mse(scale=n)"], rel=0.05)
    assert a["l1(scale=n)"] == pytest.approx(b["l1(scale=n)"], rel=0.05)


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
