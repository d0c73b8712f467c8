"""PEM: rounds, candidates, accounting, both paths (identification: tests/statistical/test_pem.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Domain, Population
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
