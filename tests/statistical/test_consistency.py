"""[W20]'s consistency methods on 1,000 random vectors: idempotence (A8 of the unit tests' properties).

The vectors and the hand-built estimates are those of
tests/unit/plugins/postprocessors/test_consistency.py (tests/support.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from support import (
    RNG_UNUSED,
    BaseCut,
    BasePos,
    Norm,
    NormCut,
    NormMul,
    NormSub,
    make_estimate,
    method_id,
    random_vectors,
)

RNG = np.random.default_rng(20200223)


VECTORS = random_vectors(RNG)


IDEMPOTENT = [BasePos(), BaseCut(alpha=0.05), Norm(), NormMul(), NormSub(algorithm="sort"), NormCut(variant="paper")]


@pytest.mark.parametrize("pp", IDEMPOTENT, ids=method_id)
def test_idempotence(pp):
    for f in VECTORS:
        once = pp.apply(make_estimate(f), RNG_UNUSED)
        twice = pp.apply(once, RNG_UNUSED)  # same estimate metadata, hence the same Base-Cut theta
        np.testing.assert_allclose(twice.frequencies, once.frequencies, rtol=0, atol=1e-12)
