"""SFP identifies a planted set with the probability claimed, and fails where the theory says it
must (docs/heavy-hitters.md). Fixed seeds; each bound says how unlikely a failure is."""

from __future__ import annotations

import numpy as np
import pytest
from support import planted_population

from ldpbench_plugins.protocols.sfp import SFP


@pytest.mark.parametrize(
    "simulation, oracle, repeats, at_least", [("aggregate", "hcms", 10, 9), ("per-user", "hcms", 3, 3)]
)
def test_sfp_identifies_four_planted_words(simulation, oracle, repeats, at_least):
    # Claim: at eps = 4 (2 + 2), 4 words each held by 8% of n = 10^5 users among 2,000 others,
    # 32-bit strings (4 fragments of 8 bits, 25,000 users per position), SFP(k=8, hash_bits=6, fragments_kept=64, m=256) returns all 4
    # with probability >= 0.995: a planted fragment's estimate is 2,000 users against a noise sd
    # of about 210 (HCMS at eps 2: sqrt(25,000 / 4) / 0.38), 9.5 sigma, far above the 64th of
    # 16,384 null keys (about 2.7 sigma), and the word sketch's 8,000 against sd 830.
    # Measured on other seeds: 40 of 40 (aggregate). At p = 0.995 the aggregate bound fails w.p. ~1e-3.
    pop, planted = planted_population(100_000, 4, 0.08, 2_000, 32, seed=4)
    hits = 0
    for r in range(repeats):
        (result,) = (
            SFP(k=8, oracle=oracle, hash_bits=6, fragments_kept=64, m=256)
            .run(pop, 4.0, np.random.default_rng([41, r]), simulation=simulation)
            .values()
        )
        hits += planted <= set(result.items.tolist())
    assert hits >= at_least, f"{hits} of {repeats}"


def test_sfp_fails_where_the_fragments_drown_in_noise():
    # Theory: at eps = 1 (0.5 per report) and n = 10^4, a planted fragment holds 200 of the 2,500
    # users of its position against a noise sd of about 205 (HCMS at eps 0.5: 25 / 0.12): 1 sigma,
    # below the 64th largest of 16,384 null keys (~2.7 sigma) with probability ~0.95, so all 16
    # planted fragments survive with probability < 1e-6: the set is found in no run.
    pop, planted = planted_population(10_000, 4, 0.08, 2_000, 32, seed=4)
    hits = 0
    for r in range(6):
        (result,) = (
            SFP(k=8, hash_bits=6, fragments_kept=64, m=256).run(pop, 1.0, np.random.default_rng([43, r])).values()
        )
        hits += planted <= set(result.items.tolist())
    assert hits == 0, f"{hits} of 6"
