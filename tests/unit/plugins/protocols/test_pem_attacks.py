"""Heavy-hitter attacks against PEM (Cao, Jia & Gong, USENIX Security 2021, §6; docs/poisoning.md):
fake users craft each round's OLH reports (``Attack.craft_hashed``) so that the targets' prefixes
are kept in every round and the targets end in the identified top-k.

Planted population: d = 1024 items (10 bits; rounds of 4, 8, 10-bit prefixes, k = 8), n = 60,000
genuine users, 8 heavy items of 4,800 users (8%) each in distinct 4-bit prefixes, 3 targets held
by nobody, in three other 4-bit prefixes, the rest (36%) spread over the other items; eps = 2
(g = 8, p* = e^2 / (e^2 + 7) = 0.513, q* = 1/8); beta = 0.05: m = 3,158 fake users, 1,053 a round
beside 20,000 genuine ones (N = 21,053).

- MGA: every fake report supports all three target prefixes (a seed hashing 3 prefixes to one
  value has probability 1/64; the search tries 2^18), so a target's estimated count is about
  1,053 (1 - q*)/(p* - q*) = 2,370 in every round, against 1,600 for a heavy item. The estimate's
  sd is sqrt(N q*(1 - q*))/(p* - q*) = 124 per candidate, so a target falls below a given heavy
  item with probability Phi(-770 / (124 sqrt 2)) = Phi(-4.4) = 5e-6; it leaves the top-k of a round
  only below 6 of the other 10 promoted or heavy candidates: never in practice.
- RIA (honest fake users holding the targets): about 351 fake holders per target, an estimated
  count of 351 (+ the genuine prefix mass in round 0: about 455 for a 4-bit prefix, heavy
  prefixes 1,600 + 455): to be kept a target must beat a heavy item, 1,250 counts = 7 sd apart:
  probability < 1e-11 per pair. No target is identified; nor in the unattacked control.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Population, ProtocolPoison
from ldpbench_plugins.protocols.pem import PEM

N, D, BETA, EPS = 60_000, 1024, 0.05, 2.0
HEAVY = np.arange(8) * 128 + 5  # 4-bit prefixes 0, 2, ..., 14
TARGETS = np.array([70, 330, 970])  # 4-bit prefixes 1, 5, 15


def planted() -> Population:
    counts = np.zeros(D, dtype=np.int64)
    rest = np.setdiff1d(np.arange(D), np.concatenate([HEAVY, TARGETS]))
    counts[rest] = round(0.36 * N / rest.size)
    counts[HEAVY] = round(0.08 * N)
    return Population(counts)


def identified(plugins, attack: str | None, seed: int, simulation: str = "aggregate") -> np.ndarray:
    pem = PEM(k=8)
    population = planted()
    m = round(BETA * population.n / (1 - BETA))
    poison = None
    if attack is not None:
        poison = ProtocolPoison(plugins.create("attack", attack), TARGETS, m, np.random.default_rng([seed, 1]))
    out = pem.run(population, EPS, np.random.default_rng([seed, 2]), simulation=simulation, poison=poison)["top-k"]
    assert out.n == population.n + (m if poison is not None else 0)
    return np.asarray(out.items, dtype=np.int64)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mga_puts_the_targets_in_the_top_k_and_ria_does_not(plugins, seed):
    assert set(TARGETS) <= set(identified(plugins, "mga", seed))
    assert not set(TARGETS) & set(identified(plugins, "ria", seed))
    clean = identified(plugins, None, seed)
    assert not set(TARGETS) & set(clean) and set(HEAVY) == set(clean)


def test_the_attack_on_the_per_user_path(plugins):
    """The same on the per-user path (genuine reports drawn and hashed one by one)."""
    found = identified(plugins, "mga", 4, simulation="per-user")
    assert set(TARGETS) <= set(found) and len(set(HEAVY) & set(found)) == 5


def test_targets_identified_metric(plugins):
    from ldpbench.types import IdentifiedItems, Poisoning

    truth = planted().replace(poisoning=Poisoning("mga", TARGETS, 10, 0.1))
    est = IdentifiedItems(items=np.array([70, 5, 330], dtype=np.uint64), frequencies=np.ones(3), n=N, epsilon=EPS, k=8)
    metric = plugins.create("metric", "targets-identified")
    assert metric.score(truth, est, np.random.default_rng(0)) == pytest.approx(2 / 3)
