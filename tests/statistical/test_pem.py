"""Heavy-hitter protocols identify a planted set with the probability claimed, and the aggregate
path of OLH over candidates draws from the per-user path's law (docs/heavy-hitters.md).

Fixed seeds throughout; each tolerance says how many standard errors it is.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import planted_population

from ldpbench.types import Population
from ldpbench_plugins.protocols import _candidates as olh
from ldpbench_plugins.protocols.fo_threshold import FOThreshold
from ldpbench_plugins.protocols.pem import PEM


@pytest.mark.parametrize(
    "simulation, n, repeats, at_least",
    [("aggregate", 100_000, 40, 36), ("per-user", 100_000, 12, 10)],
)
def test_pem_identifies_eight_planted_items_over_64_bits(simulation, n, repeats, at_least):
    # Claim (docs/heavy-hitters.md): at eps = 4, n = 10^5, 8 items each held by 4% of users among
    # 10^4 others over 64-bit strings, PEM(k=8, step_bits=4) returns exactly the planted set with
    # probability >= 0.99 (measured on other seeds: 300 of 300 aggregate runs, 12 of 12 per-user).
    # At p = 0.99 the test fails with probability about 6e-5 (aggregate: 5+ failures of 40) and
    # 2e-4 (per-user: 3+ of 12). A wrong q* or group split loses the set in most repeats.
    pop, planted = planted_population(n, 8, 0.04, 10_000, 64, seed=11)
    pem = PEM(k=8, step_bits=4)
    hits = 0
    for r in range(repeats):
        (result,) = pem.run(pop, 4.0, np.random.default_rng([24, r]), simulation=simulation).values()
        hits += set(result.items.tolist()) == planted
    assert hits >= at_least, f"{hits} of {repeats} repeats found the planted set"


def test_the_baseline_identifies_a_planted_set_on_an_enumerable_domain():
    # fo-threshold at eps = 2, n = 10^5 over d = 2^16: 5 items at 3% each, 85,000 users spread
    # over the other items (about 1.3 each). The significance threshold at beta = 0.001 (z = 5.5
    # sd; one estimate's sd is 270 users) lets a tail item through with probability about 1e-3
    # per repeat, and a planted item (3,000 users) sits 5.5 sd above it. Claim: the exact set in
    # >= 90% of repeats; expected: all but about 0.1%.
    d = 1 << 16
    planted = [7, 100, 512, 8_000, 60_000]
    counts = np.zeros(d, dtype=np.int64)
    rest = np.setdiff1d(np.arange(d), planted)
    counts[rest] = 85_000 // rest.size
    counts[rest[: 85_000 % rest.size]] += 1
    counts[planted] = 3000
    pop = Population(counts)
    hits = 0
    for r in range(40):
        (result,) = FOThreshold(k=10, beta=0.001).run(pop, 2.0, np.random.default_rng([5, r])).values()
        hits += sorted(result.items.tolist()) == planted
    assert hits >= 36, f"{hits} of 40"


def test_olh_support_counts_have_the_same_law_on_both_paths():
    # One round: N = 3,000 users, 600 holding candidate a, none holding b. The aggregate path draws
    # C_a ~ Bin(600, p*) + Bin(2400, q*) and C_b ~ Bin(3000, q*), independently. The per-user
    # path's counts, over 400 repeats, must match those means (5 standard errors of the mean),
    # variances (relative error 5 * sqrt(2/400) = 0.35) and show no correlation (|r| < 5/sqrt(400)).
    eps, n_users, held, repeats = 1.5, 3_000, 600, 400
    a, b = np.uint64(2**63 + 12345), np.uint64(987654321)
    items = np.concatenate([np.full(held, a), np.full(n_users - held, np.uint64(42))]).astype(np.uint64)
    p, q = olh.olh_probabilities(eps)
    rng = np.random.default_rng(99)
    counts = np.empty((repeats, 2))
    for r in range(repeats):
        seeds, reports = olh.perturb(items, eps, rng)
        counts[r] = olh.support_counts(seeds, reports, np.array([a, b], dtype=np.uint64), eps)
    mean = [held * p + (n_users - held) * q, n_users * q]
    var = [held * p * (1 - p) + (n_users - held) * q * (1 - q), n_users * q * (1 - q)]
    for j in range(2):
        assert abs(counts[:, j].mean() - mean[j]) < 5 * math.sqrt(var[j] / repeats)
        assert abs(counts[:, j].var(ddof=1) / var[j] - 1) < 5 * math.sqrt(2 / repeats)
    assert abs(np.corrcoef(counts[:, 0], counts[:, 1])[0, 1]) < 5 / math.sqrt(repeats)
    drawn = np.array([olh.sample_support_counts(np.array([held, 0]), n_users, eps, rng) for _ in range(repeats)])
    for j in range(2):
        assert abs(drawn[:, j].mean() - mean[j]) < 5 * math.sqrt(var[j] / repeats)


def test_pem_per_round_estimates_are_unbiased_on_both_paths():
    # The final round's estimate of a planted item's frequency is unbiased: over 30 repeats the
    # mean is within 5 standard errors of the truth (4%) on each path.
    pop, planted = planted_population(40_000, 4, 0.04, 1_000, 32, seed=3)
    for simulation in ("aggregate", "per-user"):
        found = []
        for r in range(30):
            (res,) = PEM(k=4, step_bits=8).run(pop, 3.0, np.random.default_rng([7, r]), simulation=simulation).values()
            found.extend(res.frequencies[np.isin(res.items, list(planted))].tolist())
        found = np.array(found)
        assert found.size >= 100
        assert abs(found.mean() - 0.04) < 5 * found.std(ddof=1) / math.sqrt(found.size)
