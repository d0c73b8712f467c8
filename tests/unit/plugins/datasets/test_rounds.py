"""Populations over rounds: zipf-rounds and the rounds-of stand-in (plugins/datasets/rounds.py)."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.datasets.rounds import RoundsOf, ZipfRounds


def _make(cls, **params):
    ds = cls.__new__(cls)
    for p in cls.params:
        setattr(ds, p.name, params.get(p.name, p.default))
    return ds


def test_zipf_rounds_is_a_sequence_population_fixed_by_its_seed():
    ds = _make(ZipfRounds, d=16, n=2000, rounds=4, model="redraw", r=0.2)
    a, b = ds.load(np.random.default_rng(7)), ds.load(np.random.default_rng(7))
    assert a.record == "sequence" and a.rounds.items.shape == (4, 2000)
    assert (a.rounds.items == b.rounds.items).all()
    assert not (a.rounds.items == ds.load(np.random.default_rng(8)).rounds.items).all()
    assert a.counts[0] > a.counts[-1]  # Zipf in round 0


def test_rounds_of_states_it_is_a_stand_in():
    ds = _make(RoundsOf, base="kosarak-head", rounds=2, model="static")
    pop = ds.load(np.random.default_rng(0))
    assert pop.info["stand_in"] is True and "STAND-IN" in pop.info["source"]
    assert pop.rounds.T == 2 and (pop.rounds.items[1] == pop.rounds.items[0]).all()
    assert pop.n == 294_009
