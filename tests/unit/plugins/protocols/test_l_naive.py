"""The naive longitudinal baseline (plugins/protocols/l_naive.py): a fresh report every round."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds
from ldpbench_plugins.protocols.l_naive import NaiveRounds


def _make(**params):
    obj = NaiveRounds.__new__(NaiveRounds)
    for p in NaiveRounds.params:
        setattr(obj, p.name, params.get(p.name, p.default))
    return obj


def test_accounting_has_no_bound_over_rounds():
    (group,) = _make().privacy_accounting(1.5)
    assert group["epsilon_inf"] is None and group["epsilon_1"] == 1.5 and group["per_report"] == 1.5
    assert "T * epsilon_1" in group["on_change"]


@pytest.mark.parametrize("oracle", ["grr", "oue"])
def test_each_round_is_the_oracle_at_epsilon(oracle):
    chain = _make(oracle=oracle).chain(8, 2.0)
    assert chain.eps_1 == pytest.approx(2.0) and math.isinf(chain.eps_inf)
    assert chain.round_covariance(100, 0.3) == 0  # nothing shared between rounds


def test_runs_per_round():
    items = np.tile(np.repeat(np.arange(3), [5, 3, 2]), (2, 1))
    pop = Population(np.array([5, 3, 2]), record="sequence", rounds=Rounds(items))
    out = _make().run(pop, 1.0, np.random.default_rng(0), simulation="per-user")
    assert list(out) == ["round-1", "round-2", "rounds-mean"] and out["round-2"].d == 3
