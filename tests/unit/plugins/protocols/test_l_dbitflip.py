"""dBitFlipPM (plugins/protocols/l_dbitflip.py): memoized reports and accounting (the estimator's
moments: tests/statistical/test_l_dbitflip.py)."""

from __future__ import annotations

import numpy as np

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds
from ldpbench_plugins.protocols.l_dbitflip import DBitFlipPM

COUNTS = np.array([600, 400, 250, 150, 100, 0])
N, D = int(COUNTS.sum()), COUNTS.size
STATIC = Population(COUNTS, record="sequence", rounds=Rounds(np.tile(np.repeat(np.arange(D), COUNTS), (2, 1))))


def _make(bits):
    obj = DBitFlipPM.__new__(DBitFlipPM)
    obj.bits = bits
    return obj


def test_accounting_and_memoized_reports():
    (group,) = _make(2).privacy_accounting(1.5)
    assert group["epsilon_inf"] == group["epsilon_1"] == 1.5
    out = _make(2).run(STATIC, 1.0, np.random.default_rng(0))
    # Nobody changes value: every round resends the same memoized bits.
    assert (out["round-1"].frequencies == out["round-2"].frequencies).all()
