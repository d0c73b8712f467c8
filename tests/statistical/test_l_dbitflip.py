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
    obj.bits = bits
    return obj


@pytest.mark.parametrize("bits", [1, 3])
def test_unbiased_with_the_formula_variance(bits):
    """200 repeats, n = 1500: means within 4.5 sd (6 values), variance ratio pooled over the 6 items
    within 0.2 of 1 (relative sd of one sample variance sqrt(2/199) ~ 0.1, pooled ~0.045: 4.4 sd)."""
    proto, reps, eps = _make(bits), 200, 2.0
    est = np.array(
        [proto.run(STATIC, eps, np.random.default_rng([7, bits, r]))["round-1"].frequencies for r in range(reps)]
    )
    f = COUNTS / N
    var = dbitflip_variance(N, D, bits, eps, f)
    assert np.abs((est.mean(axis=0) - f) / np.sqrt(var / reps)).max() < 4.5
    assert abs((est.var(axis=0, ddof=1) / var).mean() - 1) < 0.2
