"""Random streams are keyed by identity, not by order (ldpbench/spec/seeding.py)."""

from __future__ import annotations

import numpy as np

from ldpbench.spec.seeding import identity_key, rng_for


def test_streams_depend_on_identity_not_order():
    a1 = rng_for(5, "mechanism", "zipf", 1.0, "grr", 0).random(4)
    b = rng_for(5, "mechanism", "zipf", 1.0, "grr", 1).random(4)
    a2 = rng_for(5, "mechanism", "zipf", 1.0, "grr", 0).random(4)
    other_seed = rng_for(6, "mechanism", "zipf", 1.0, "grr", 0).random(4)
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(a1, b) and not np.array_equal(a1, other_seed)
    assert identity_key("a", "bc") != identity_key("ab", "c")
