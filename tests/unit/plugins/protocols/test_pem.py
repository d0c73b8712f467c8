"""PEM: rounds, candidates, accounting, both paths (identification: tests/statistical/test_pem.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Domain, IdentifiedItems, Poisoning, Population, ProtocolPoison
from ldpbench_plugins.protocols.pem import PEM, extend, prefix_lengths, top


def test_prefix_lengths_and_extension():
    assert prefix_lengths(64, 5, 4) == [5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61, 64]
    assert prefix_lengths(8, 8, 4) == [8]
    assert extend(np.array([1, 2], dtype=np.uint64), 2).tolist() == [4, 5, 6, 7, 8, 9, 10, 11]
    cand, est = top(np.array([5, 3, 9], dtype=np.uint64), np.array([0.1, 0.3, 0.3]), 2)
    assert cand.tolist() == [3, 9] and est.tolist() == [0.3, 0.3]


def test_pem_declares_it_lists_only_candidates():
    tags = PEM().tags()
    assert tags.result == "identified-items" and not tags.enumerates_domain
    assert PEM(k=16).first_bits == 5 and PEM(k=16, start_bits=7).first_bits == 7


@pytest.mark.parametrize("split", ["users", "budget"])
@pytest.mark.parametrize("bits", [20, 64])
def test_each_users_budget_over_the_rounds_adds_up_to_epsilon(split, bits):
    pem = PEM(k=8, split=split)
    groups = pem.privacy_accounting(1.5, bits=bits)
    r = len(pem.rounds(bits))
    assert len(groups) == (1 if split == "budget" else r)
    for group in groups:
        assert group["model"] == "local" and len(group["per_round"]) == r
        assert math.isclose(sum(group["per_round"]), 1.5) and group["epsilon"] == 1.5
    assert pem.privacy_accounting(1.5)[0]["epsilon"] == 1.5  # the manifest's, before any dataset


def _planted(bits=64):
    values = np.array([11, 2**40 + 3, 2**63 + 1, 2**64 - 2, 77, 2**50], dtype=np.uint64)
    counts = np.array([30_000, 20_000, 15_000, 10_000, 100, 100])
    order = np.argsort(values)
    return Population(counts[order], domain=Domain.bit_strings(bits), values=values[order])


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_pem_finds_planted_heavy_hitters_at_a_large_budget(simulation):
    pop = _planted()
    (result,) = PEM(k=4).run(pop, 6.0, np.random.default_rng(7), simulation=simulation).values()
    assert sorted(result.items.tolist()) == sorted([11, 2**40 + 3, 2**63 + 1, 2**64 - 2])
    # frequencies are fractions of all users, as the truth's
    assert abs(result.frequencies[0] - 30_000 / pop.n) < 0.05
    assert result.n == pop.n and result.k == 4 and result.bits_per_user == 64 + 9
    assert len(result.rounds) == 17 and sum(r["users"] for r in result.rounds) == pop.n
    assert result.server_seconds >= 0


def test_pem_split_budget_has_every_user_in_every_round():
    (result,) = PEM(k=4, split="budget").run(_planted(), 6.0, np.random.default_rng(7)).values()
    assert all(r["users"] == _planted().n for r in result.rounds)
    assert math.isclose(sum(r["epsilon"] for r in result.rounds), 6.0)


def test_pem_runs_on_an_enumerable_domain_as_its_bit_strings():
    pop = Population(np.array([0, 0, 5000, 0, 0, 0, 0, 3000]))
    (result,) = PEM(k=2).run(pop, 8.0, np.random.default_rng(1)).values()
    assert sorted(result.items.tolist()) == [2, 7]


# -- heavy-hitter attacks ----------------------------------------------------------------------
# Heavy-hitter attacks against PEM (Cao, Jia & Gong, USENIX Security 2021, §6; docs/poisoning.md):
# fake users craft each round's OLH reports (``Attack.craft_hashed``) so that the targets' prefixes
# are kept in every round and the targets end in the identified top-k.
#
# Planted population: d = 1024 items (10 bits; rounds of 4, 8, 10-bit prefixes, k = 8), n = 60,000
# genuine users, 8 heavy items of 4,800 users (8%) each in distinct 4-bit prefixes, 3 targets held
# by nobody, in three other 4-bit prefixes, the rest (36%) spread over the other items; eps = 2
# (g = 8, p* = e^2 / (e^2 + 7) = 0.513, q* = 1/8); beta = 0.05: m = 3,158 fake users, 1,053 a round
# beside 20,000 genuine ones (N = 21,053).
#
# - MGA: every fake report supports all three target prefixes (a seed hashing 3 prefixes to one
#   value has probability 1/64; the search tries 2^18), so a target's estimated count is about
#   1,053 (1 - q*)/(p* - q*) = 2,370 in every round, against 1,600 for a heavy item. The estimate's
#   sd is sqrt(N q*(1 - q*))/(p* - q*) = 124 per candidate, so a target falls below a given heavy
#   item with probability Phi(-770 / (124 sqrt 2)) = Phi(-4.4) = 5e-6; it leaves the top-k of a round
#   only below 6 of the other 10 promoted or heavy candidates: never in practice.
# - RIA (honest fake users holding the targets): about 351 fake holders per target, an estimated
#   count of 351 (+ the genuine prefix mass in round 0: about 455 for a 4-bit prefix, heavy
#   prefixes 1,600 + 455): to be kept a target must beat a heavy item, 1,250 counts = 7 sd apart:
#   probability < 1e-11 per pair. No target is identified; nor in the unattacked control.

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
    truth = planted().replace(poisoning=Poisoning("mga", TARGETS, 10, 0.1))
    est = IdentifiedItems(items=np.array([70, 5, 330], dtype=np.uint64), frequencies=np.ones(3), n=N, epsilon=EPS, k=8)
    metric = plugins.create("metric", "targets-identified")
    assert metric.score(truth, est, np.random.default_rng(0)) == pytest.approx(2 / 3)
