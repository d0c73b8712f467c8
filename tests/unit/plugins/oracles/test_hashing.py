"""The OLH hash family (plugins/oracles/_hashing.py): every evaluation path agrees."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.oracles import _hashing


def test_hash_family_evaluations_agree():
    rng = np.random.default_rng(3)
    keys = _hashing.value_keys(np.arange(37))
    seeds = _hashing.random_seeds(5000, rng)
    table = _hashing.hash_table(seeds, keys, 7)
    assert table.min() >= 0 and table.max() < 7
    items = rng.integers(0, 37, 5000)
    np.testing.assert_array_equal(_hashing.hash_pairs(seeds, keys[items], 7), table[np.arange(5000), items])
    y = rng.integers(0, 7, 5000)
    np.testing.assert_array_equal(_hashing.matches_per_value(seeds, y, keys, 7), (table == y[:, None]).sum(axis=0))
