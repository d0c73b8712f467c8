"""Calibrate on Retail and at Kosarak scale ([JG19] §IV; docs/algorithms.md §8.4, §8.1).

OUE through the aggregate path (exact in distribution), T = 10 paired repeats per epsilon: the
three methods post-process the same OUE estimate, so their differences are measured precisely.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

PAPER_IMPROVEMENT = {1: 2.4, 5: 65.0}  # [JG19] §IV-B, Retail, % over OUE-Zero


@pytest.fixture(scope="module")
def retail(plugins):
    return plugins.create("dataset", "retail").load(np.random.default_rng(0))


def run_retail(plugins, retail, eps: float, repeats: int = 10):
    n, truth = retail.n, retail.counts
    oue = plugins.create("oracle", "oue", {}, d=retail.d, epsilon=eps)
    zero = plugins.create("postprocessor", "base-cut", {})
    cal = plugins.create("postprocessor", "calibrate", {"prior": "power-law"})
    metrics = [plugins.create("metric", m, {}) for m in ("precision", "recall", "f-score")]
    out = {"oue": [], "zero": [], "cal": []}
    prf = {"oue": [], "zero": [], "cal": []}
    for rep in range(repeats):
        rng = np.random.default_rng([2019, int(eps), rep])
        est = oue.estimate(oue.sample_support_counts(truth, rng), n)
        for name, e in (("oue", est), ("zero", zero.apply(est, rng)), ("cal", cal.apply(est, rng))):
            out[name].append(float(((e.frequencies * n - truth) ** 2).mean()))
            prf[name].append([m.score(retail, e, rng) for m in metrics])
    return {k: np.asarray(v) for k, v in out.items()}, {k: np.asarray(v) for k, v in prf.items()}


def test_d4_retail_calibrate_vs_oue_zero(plugins, retail):
    improvement = {}
    for eps in (1, 4, 5):
        err, _ = run_retail(plugins, retail, eps)
        mean = {k: v.mean() for k, v in err.items()}
        improvement[eps] = 100 * (mean["zero"] - mean["cal"]) / mean["zero"]
        print(
            f"\nRetail eps={eps}: MSE (count scale) OUE {mean['oue']:.4g}, OUE-Zero {mean['zero']:.4g}, "
            f"OUE-Calibrate {mean['cal']:.4g}; improvement over Zero {improvement[eps]:.1f}% "
            f"(paper: {PAPER_IMPROVEMENT.get(eps, '-')}%)"
        )
        assert mean["zero"] < mean["oue"] / 2 and mean["cal"] < mean["oue"] / 2
        if eps >= 4:
            # paired differences: Calibrate wins in every repeat at eps = 4 and 5
            assert np.all(err["cal"] < err["zero"])
    # At eps = 1 Calibrate and OUE-Zero are within a few percent of each other (the paper: 2.4%);
    # we measure about -1% to +1% (see reports/jia2019_calibrate.md): not asserted either way.
    assert abs(improvement[1]) < 10
    assert improvement[5] > improvement[1] + 15


def test_d5_retail_heavy_hitters_at_the_significance_threshold(plugins, retail):
    _, prf = run_retail(plugins, retail, 4)
    oue, zero, cal = (prf[k].mean(axis=0) for k in ("oue", "zero", "cal"))
    print(f"\nRetail eps=4 P/R/F: OUE {oue.round(4)}, OUE-Zero {zero.round(4)}, OUE-Calibrate {cal.round(4)}")
    np.testing.assert_array_equal(prf["oue"], prf["zero"])  # identical at a threshold >= T
    assert cal[0] >= oue[0]  # precision up
    assert cal[1] <= oue[1]  # recall down
    assert cal[2] >= oue[2]  # F-score at least OUE's


def test_a10_oue_noise_sd_at_kosarak_scale(plugins):
    # Any dataset with n = 8,019,015 gives the theoretical OUE noise sd 5,434.3 at eps = 1.
    pop = plugins.create("dataset", "zipf", {"d": 41_270, "n": 8_019_015, "s": 1.0}).load(np.random.default_rng(0))
    oue = plugins.create("oracle", "oue", {}, d=pop.d, epsilon=1.0)
    rng = np.random.default_rng(5434)
    est = oue.estimate(oue.sample_support_counts(pop.counts, rng), pop.n)
    noise = est.frequencies * pop.n - pop.counts
    assert math.sqrt(est.variance[0]) * pop.n == pytest.approx(5_434.3, abs=0.05)
    # SE of a sample sd over d items is sd / sqrt(2 d) = 0.35%; the f_v term adds < 0.1% here
    assert noise.std() == pytest.approx(5_434.3, rel=0.02)
    assert abs(noise.mean()) < 5 * 5_434.3 / math.sqrt(pop.d)
