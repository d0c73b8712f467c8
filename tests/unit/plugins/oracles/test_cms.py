"""CMS (plugins/oracles/cms.py): the null law of the merged table, by brute force."""

from __future__ import annotations

import itertools
import math

import pytest

from ldpbench_plugins.oracles.cms import CMS


def test_cms_null_law_by_brute_force():
    """P0(z) of the merged CMS table, against enumerating every function h: D -> [m] and bit vector."""
    for m, d in ((2, 3), (4, 3), (2, 4)):
        o = CMS(d=d, epsilon=1.0, m=m)
        q = o._q0
        brute = {}
        for h in itertools.product(range(m), repeat=d):
            for bits in itertools.product((0, 1), repeat=m):
                weight = m**-d * math.prod(q if b else 1 - q for b in bits)
                z = tuple(bits[h[w]] for w in range(d))
                brute[z] = brute.get(z, 0.0) + weight
        for z, want in brute.items():
            assert o._null_probability(sum(z), d - sum(z)) == pytest.approx(want, rel=1e-12)
