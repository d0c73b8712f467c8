"""fo-threshold: the baseline, OLH over [d] thresholded."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols.fo_threshold import FOThreshold


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_it_finds_the_planted_items_and_nothing_below_the_threshold(simulation):
    counts = np.full(200, 10)
    counts[[3, 50, 120]] = [8000, 6000, 4000]
    (result,) = FOThreshold(k=10).run(Population(counts), 3.0, np.random.default_rng(2), simulation=simulation).values()
    assert result.items.tolist() == [3, 50, 120]
    assert result.rounds[0]["threshold"] > 0 and result.bits_per_user == 64 + 5


def test_it_enumerates_and_refuses_a_bit_string_domain():
    assert FOThreshold().tags().enumerates_domain
    pop = Population(np.array([1]), domain=Domain.bit_strings(64), values=np.array([5], dtype=np.uint64))
    with pytest.raises(ValueError, match="enumerates its domain"):
        FOThreshold().run(pop, 1.0, np.random.default_rng(0))


def test_a_fixed_threshold_and_the_accounting():
    counts = np.array([5000, 3000, 1000, 1000])
    (result,) = FOThreshold(k=4, threshold=0.25).run(Population(counts), 8.0, np.random.default_rng(0)).values()
    assert result.items.tolist() == [0, 1]
    (group,) = FOThreshold().privacy_accounting(2.0)
    assert group["epsilon"] == 2.0 and group["per_round"] == [2.0]
