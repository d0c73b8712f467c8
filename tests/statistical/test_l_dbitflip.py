"""dBitFlipPM's per-round estimator against its variance formula (plugins/protocols/l_dbitflip.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds
from ldpbench_plugins.protocols.l_dbitflip import DBitFlipPM, dbitflip_variance

COUNTS = np.array([600, 400, 250, 150, 100, 0])
N, D = int(COUNTS.sum()), COUNTS.size
STATIC = Population(COUNTS, record="sequence", rounds=Rounds(np.tile(np.repeat(np.arange(D), COUNTS), (2, 1))))


def _make(bits):
    obj = DBitFlipPM.__new__(DBitFlipPM)
    obj.bits, obj.buckets = bits, 0
    return obj


@pytest.mark.parametrize("bits", [1, 3])
def test_unbiased_with_the_formula_variance(bits):
    """The per-user path (the aggregate one: below). 200 repeats, n = 1500: means within 4.5 sd (6 values), variance ratio pooled over the 6 items
    within 0.2 of 1 (relative sd of one sample variance sqrt(2/199) ~ 0.1, pooled ~0.045: 4.4 sd)."""
    proto, reps, eps = _make(bits), 200, 2.0
    est = np.array(
        [
            proto.run(STATIC, eps, np.random.default_rng([7, bits, r]), simulation="per-user")["round-1"].frequencies
            for r in range(reps)
        ]
    )
    f = COUNTS / N
    var = dbitflip_variance(N, D, bits, eps, f)
    assert np.abs((est.mean(axis=0) - f) / np.sqrt(var / reps)).max() < 4.5
    assert abs((est.var(axis=0, ddof=1) / var).mean() - 1) < 0.2


# Round 2: the first 500 users move to the next value; the other 1000 keep theirs (and their report).
_R0 = np.repeat(np.arange(D), COUNTS)
_R1 = _R0.copy()
_R1[:500] = (_R1[:500] + 1) % D
MOVING = Population(COUNTS, record="sequence", rounds=Rounds(np.stack([_R0, _R1])))


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_both_paths_match_the_formulas_per_round_and_across_rounds(simulation):
    """Exact aggregate vs per-user on a population where a third of the users change value, bits = 3,
    250 repeats each: per round, means within 4.5 sd and the variance pooled over 6 items within 0.2
    of the formula (pooled relative sd ~0.04: 5 sd); the covariance of the two rounds' estimates,
    which only the 1000 users who kept their memoized report carry (d/(n bits))^2 sum_kept Var S, pooled
    over the items within 0.25 of the formula (sd of a sample covariance / C ~ sqrt((V^2 + C^2)/ (C^2 reps))
    ~ 0.1 per item, pooled ~0.05: 5 sd). A path that redrew the report each round has covariance 0;
    one that drew positions per round but kept bits, about bits/d of it."""
    proto, reps, eps, bits = _make(3), 250, 2.0, 3
    est = np.array(
        [
            [
                proto.run(MOVING, eps, np.random.default_rng([11, r]), simulation=simulation)[f"round-{t}"].frequencies
                for t in (1, 2)
            ]
            for r in range(reps)
        ]
    )  # (reps, 2, D)
    for t, items in enumerate((_R0, _R1)):
        f = np.bincount(items, minlength=D) / N
        var = dbitflip_variance(N, D, bits, eps, f)
        assert np.abs((est[:, t].mean(axis=0) - f) / np.sqrt(var / reps)).max() < 4.5
        assert abs((est[:, t].var(axis=0, ddof=1) / var).mean() - 1) < 0.2
    kept = _R0[500:]
    f_kept = np.bincount(kept, minlength=D) / kept.size
    cov = dbitflip_variance(kept.size, D, bits, eps, f_kept) * (kept.size / N) ** 2
    centered = est - est.mean(axis=0)
    sample = (centered[:, 0] * centered[:, 1]).sum(axis=0) / (reps - 1)
    assert abs((sample / cov).mean() - 1) < 0.25, sample / cov


# Bucketing (the paper's k < d): 12 items into 4 contiguous buckets of 3; the estimate is over buckets.
ITEMS12 = np.array([300, 200, 100, 150, 150, 0, 50, 50, 100, 0, 0, 400])
STATIC12 = Population(ITEMS12, record="sequence", rounds=Rounds(np.tile(np.repeat(np.arange(12), ITEMS12), (2, 1))))


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_bucketed_estimates_are_unbiased_for_the_bucketed_truth_with_the_formula_variance(simulation):
    """buckets = 4, bits = 2, eps = 2, n = 1500, 200 repeats: each bucket's mean within 4.5 sd of its
    true share (600, 300, 200, 400)/1500 and the variance pooled over the 4 buckets within 0.25 of
    dbitflip_variance at d = k = 4 (relative sd of one sample variance sqrt(2/199) ~ 0.1, pooled over 4
    ~ 0.05: 5 sd); an estimator over the 12 items, or scaled by d instead of k, fails both."""
    proto, reps, eps = _make(2), 200, 2.0
    proto.buckets = 4
    out = [proto.run(STATIC12, eps, np.random.default_rng([13, r]), simulation=simulation) for r in range(reps)]
    est = np.array([o["round-1"].frequencies for o in out])
    assert est.shape == (reps, 4) and out[0]["round-1"].info["buckets"] == 4
    f = np.array([600, 300, 200, 400]) / 1500
    np.testing.assert_array_equal(STATIC12.bucketed(4).counts, [600, 300, 200, 400])
    var = dbitflip_variance(1500, 4, 2, eps, f)
    assert np.abs((est.mean(axis=0) - f) / np.sqrt(var / reps)).max() < 4.5
    assert abs((est.var(axis=0, ddof=1) / var).mean() - 1) < 0.25
    # nobody changes value: the averaged-over-rounds output is each round's (one memoized report)
    np.testing.assert_allclose(out[0]["rounds-mean"].frequencies, out[0]["round-1"].frequencies)
