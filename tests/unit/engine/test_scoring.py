"""engine/scoring.py: which pipelines keep the oracle's vector (and so get a ``theory`` value)."""

from __future__ import annotations

import numpy as np

from ldpbench.engine.scoring import _same_vector
from ldpbench.types import Estimate


def _estimate(f, items=None) -> Estimate:
    f = np.asarray(f, dtype=float)
    return Estimate(frequencies=f, n=100, epsilon=1.0, items=items)


def test_the_same_vector_is_what_equal_digests_say():
    rng = np.random.default_rng(0)
    f = rng.normal(size=50)
    cases = [
        (f, f.copy(), None, None),  # a copy: the same numbers
        (f, f + 1e-17, None, None),  # below the last bit of most entries: still a check of every word
        (f, np.nextafter(f, 2), None, None),  # every entry one ulp up
        (np.zeros(3), -np.zeros(3), None, None),  # 0.0 and -0.0 differ as words, and in the digest
        (f[:3], f[:3], [1, 2, 3], [1, 2, 3]),
        (f[:3], f[:3], [1, 2, 3], [1, 2, 4]),
        (f[:3], f[:3], [1, 2, 3], None),
        (f, f[:49], None, None),
    ]
    for a, b, ia, ib in cases:
        x, y = _estimate(a, ia), _estimate(b, ib)
        assert _same_vector(x, y) == (x.frequencies_digest() == y.frequencies_digest()), (a[:2], b[:2], ia, ib)
    assert _same_vector(_estimate(f), _estimate(f.copy()))
    assert not _same_vector(_estimate(np.zeros(3)), _estimate(-np.zeros(3)))
