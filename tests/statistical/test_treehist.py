"""TreeHist identifies a planted set with the probability claimed (docs/heavy-hitters.md).

Fixed seeds; each bound says how unlikely a failure of a correct implementation is.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import planted_population

from ldpbench_plugins.protocols.treehist import TreeHist


@pytest.mark.parametrize(
    "simulation, n, bits, repeats, at_least",
    [("aggregate", 1_000_000, 64, 20, 18), ("per-user", 200_000, 32, 6, 5)],
)
def test_treehist_identifies_eight_planted_items(simulation, n, bits, repeats, at_least):
    # Claim: at eps = 4, 8 items each held by 4% of users among 10^4 others, TreeHist(k=8) returns
    # exactly the planted set with probability >= 0.99: over 64-bit strings with n = 10^6 (64
    # levels of 15,625 users), over 32-bit strings with n = 2 * 10^5 per user (measured on other
    # seeds: 100 of 100 and 6 of 6). At p = 0.99 the test fails with probability about 1e-3
    # (3+ failures of 20) and 1.5e-3 (2+ of 6). A wrong threshold (too high: planted prefixes
    # pruned; too low: the cap fills with tail prefixes) loses the set.
    pop, planted = planted_population(n, 8, 0.04, 10_000, bits, seed=11)
    hits = 0
    for r in range(repeats):
        (result,) = TreeHist(k=8).run(pop, 4.0, np.random.default_rng([31, r]), simulation=simulation).values()
        hits += set(result.items.tolist()) == planted
    assert hits >= at_least, f"{hits} of {repeats}"
