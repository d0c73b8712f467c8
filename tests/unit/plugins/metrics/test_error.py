"""The error metrics (plugins/metrics/error.py; docs/algorithms.md §6.6, §5.6, §8.1): L1 by hand,
``mse`` with ``reduction: sum``, and ``scale: n``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import builtin_plugins

import ldpbench
from ldpbench.errors import ParamError
from ldpbench.types import Estimate, Population
from ldpbench_plugins.metrics.error import L1, MSE

RNG = np.random.default_rng(0)
TRUTH = Population(np.array([50, 30, 20]))


def l1(**params) -> L1:
    values = {p.name: p.default for p in L1.params}
    values.update(params)
    return L1(**values)


def est(freqs, items=None, n=100) -> Estimate:
    return Estimate(np.asarray(freqs, dtype=float), n=n, epsilon=1.0, items=items)


def test_full_domain_by_hand():
    e = est([0.4, 0.4, 0.1])
    assert l1().score(TRUTH, e, RNG) == pytest.approx(0.3)
    assert l1(reduction="mean").score(TRUTH, e, RNG) == pytest.approx(0.1)
    assert l1(scale="count").score(TRUTH, e, RNG) == pytest.approx(30.0)
    assert l1(scale="count", reduction="mean").score(TRUTH, e, RNG) == pytest.approx(10.0)
    # a full-domain comparison is never rescaled, even when the estimate does not sum to 1
    assert l1().score(TRUTH, est([0.8, 0.6, 0.4]), RNG) == pytest.approx(0.3 + 0.3 + 0.2)


def test_partial_estimate_rescales_both_by_default():
    e = est([0.6, 0.2], items=np.array([0, 2]))  # truth restricted: [0.5, 0.2] -> [5/7, 2/7]
    both = abs(0.75 - 5 / 7) + abs(0.25 - 2 / 7)
    assert l1().score(TRUTH, e, RNG) == pytest.approx(both)
    assert l1(rescale="truth").score(TRUTH, e, RNG) == pytest.approx(abs(0.6 - 5 / 7) + abs(0.2 - 2 / 7))
    assert l1(rescale="none").score(TRUTH, e, RNG) == pytest.approx(0.1)


def test_top_restricts_to_the_truly_largest_items():
    e = est([0.4, 0.4, 0.1])  # top 2 true items: 0 and 1 -> truth [0.625, 0.375], estimate [0.5, 0.5]
    assert l1(top=2).score(TRUTH, e, RNG) == pytest.approx(0.25)
    assert l1(top=3).score(TRUTH, e, RNG) == pytest.approx(0.3)  # the whole domain: no rescaling
    # on a partial estimate, top picks among the covered items
    e = est([0.6, 0.2], items=np.array([2, 0]))  # covers items 2 (0.2) and 0 (0.5)
    assert l1(top=1, rescale="truth").score(TRUTH, e, RNG) == pytest.approx(0.8)  # item 0 alone: 0.2 vs 1
    # rescaling both over one item makes both 1: a metric that is 0 whatever the estimate is refused
    with pytest.raises(ParamError, match="top: 1 and rescale: both is 0 whatever the estimate"):
        l1(top=1)


def test_edge_cases():
    assert math.isnan(l1().score(TRUTH, est([], items=np.array([], dtype=int)), RNG))
    # an estimate with no positive mass on the list: see the last test (L1 = 1, not an error)


def test_registered_next_to_mse(plugins):
    assert plugins.get("metric", "l1").cls is L1
    assert plugins.get("metric", "mse").cls is MSE
    assert L1.greater_is_better is False


def test_an_estimate_with_no_mass_on_the_list_scores_the_worst_not_a_failure():
    # A low-eps client estimate projected to all zeros over the head list: it found none of the
    # list's mass. Its shares are 0, so L1 = sum of the truth's shares = 1 (seen in 1 of 20 repeats
    # of the CI Blender spec under another seed, where it used to fail the cell).
    for freqs in ([0.0, 0.0], [-0.1, 0.05]):
        assert l1().score(TRUTH, est(freqs, items=np.array([0, 2])), RNG) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="cannot rescale"):  # the truth always has mass on a real list
        l1().score(Population(np.array([0, 10, 0])), est([0.5, 0.5], items=np.array([0, 2])), RNG)


def test_validate_refuses_a_metric_that_cannot_vary_at_its_line(tmp_path, plugins):
    from ldpbench.errors import SpecError
    from ldpbench.spec.validate import load_spec

    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: c\nseed: 1\nrepeats: 1\ndatasets:\n  - zipf: {d: 8, n: 200, s: 1.2}\nepsilons: [1]\n"
        "oracles: [oue]\nmetrics:\n  - mse\n  - l1: {top: 1}\n  - l1: {top: 1, rescale: none}\n"
    )
    with pytest.raises(SpecError) as info:
        load_spec(spec, plugins)
    (problem,) = info.value.problems
    assert problem.startswith(f"{spec}:10: l1 with top: 1 and rescale: both is 0"), problem


PLUGINS = builtin_plugins()


# -- the paper's error measure -------------------------------------------------------------------


def test_mse_sum_is_the_squared_l2_norm_of_the_error():
    """[MHS18]'s MSE is E||theta_hat - theta||^2 (summed over items): ``mse: {reduction: sum}``."""
    pop = Population(np.array([5, 3, 2, 0]))
    est = Estimate(np.array([0.6, 0.1, 0.1, 0.2]), n=10, epsilon=1.0)
    summed = PLUGINS.create("metric", "mse", {"reduction": "sum"}).score(pop, est, np.random.default_rng(0))
    mean = PLUGINS.create("metric", "mse", {}).score(pop, est, np.random.default_rng(0))
    expected = 0.1**2 + 0.2**2 + 0.1**2 + 0.2**2
    assert summed == pytest.approx(expected, rel=1e-12)
    assert mean == pytest.approx(expected / 4, rel=1e-12)


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
