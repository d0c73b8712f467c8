"""SUE (plugins/oracles/sue.py) differs from OUE only in its bit probabilities."""

from __future__ import annotations

import math

import pytest

from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.oracles.sue import SUE

EPSILONS = (0.5, 1.0, 4.0)


def test_sue_and_oue_differ_only_in_their_bit_probabilities():
    for eps in EPSILONS:
        sue, oue = SUE(d=5, epsilon=eps), OUE(d=5, epsilon=eps)
        assert sue.p_star + sue.q_star == pytest.approx(1.0)
        assert oue.p_star == 0.5 and type(sue).perturb is type(oue).perturb
        # OUE's approximate variance is the smaller ([W17] §4.3)
        assert oue.noise_variance(1000) < sue.noise_variance(1000)
    assert SUE(d=5, epsilon=math.inf).p_star == 1.0 and SUE(d=5, epsilon=math.inf).q_star == 0.0
