"""SFP: fragments, the puzzle's assembly, accounting (identification: tests/statistical/test_sfp.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.errors import ParamError
from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols.sfp import SFP, assemble, fragment_keys, fragment_layout, puzzle_hash


def test_fragments_cover_the_word_most_significant_first():
    widths, shifts = fragment_layout(20, 8)
    assert widths.tolist() == [8, 8, 4] and shifts.tolist() == [12, 4, 0]
    v = np.array([0xABCDE], dtype=np.uint64)
    h = np.array([3])
    got = [int(fragment_keys(v, h, int(w), int(s))[0]) for w, s in zip(widths, shifts)]
    assert got == [(3 << 8) | 0xAB, (3 << 8) | 0xCD, (3 << 4) | 0xE]


def test_assembly_joins_fragments_sharing_a_hash_and_caps_the_candidates():
    widths = np.array([4, 4])
    kept = [np.array([(1 << 4) | 0xA, (1 << 4) | 0xB, (2 << 4) | 0xC]), np.array([(1 << 4) | 0x1, (3 << 4) | 0x2])]
    words, hashes, dropped = assemble(kept, widths, 2, 100)
    assert sorted(zip(words.tolist(), hashes.tolist())) == [(0xA1, 1), (0xB1, 1)] and dropped == 0
    kept = [np.array([(1 << 4) | 0xA, (1 << 4) | 0xB, (2 << 4) | 0xC]), np.array([(1 << 4) | 0x1, (2 << 4) | 0x2])]
    words, hashes, dropped = assemble(kept, widths, 2, 1)  # hash 2's single word fits, hash 1's two do not
    assert words.tolist() == [0xC2] and hashes.tolist() == [2] and dropped == 1


def test_accounting_splits_epsilon_between_the_two_reports():
    sfp = SFP(fragment_share=0.3)
    (group,) = sfp.privacy_accounting(2.0)
    assert math.isclose(sum(group["per_round"]), 2.0) and math.isclose(group["per_round"][0], 0.6)
    assert [e for _, _, e in sfp.round_oracles(2.0, Domain.bit_strings(64))] == group["per_round"]


@pytest.mark.parametrize("oracle", ["hcms", "cms"])
def test_sfp_finds_the_heavy_words_on_both_paths_without_listing_the_domain(oracle):
    values = np.array([5, 12345, 2**40 + 9, 2**63 + 1, 2**64 - 7], dtype=np.uint64)
    pop = Population(np.array([8_000, 10, 6_000, 4_000, 2_000]), domain=Domain.bit_strings(64), values=values)
    sfp = SFP(k=3, oracle=oracle, m=64, hash_bits=4, fragments_kept=8)
    assert not sfp.tags().enumerates_domain
    for simulation in ("aggregate", "per-user"):
        (result,) = sfp.run(pop, 8.0, np.random.default_rng(3), simulation=simulation).values()
        assert result.items.tolist() == [5, 2**40 + 9, 2**63 + 1]
        assert [r["epsilon"] for r in result.rounds] == [4.0, 4.0] and result.info["positions"] == 8
        assert np.all(puzzle_hash(result.items, 4) < 16)


def test_a_fragment_space_too_large_to_list_is_refused():
    pop = Population(np.array([10]), domain=Domain.bit_strings(64), values=np.array([1], dtype=np.uint64))
    with pytest.raises(ParamError, match="hash_bits"):
        SFP(hash_bits=12, fragment_bits=12).run(pop, 1.0, np.random.default_rng(0))
