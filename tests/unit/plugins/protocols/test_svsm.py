"""svsm: SVSM's item mining (SVIM) on set-valued users: phases, accounting, the padding length."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.types import Domain, Population
from ldpbench_plugins.datasets.sets import zipf_sets
from ldpbench_plugins.protocols.svsm import SVSM, percentile_length


def test_the_padding_length_is_the_percentile_of_the_estimated_sizes():
    # sizes 1..4 held by 50, 30, 15, 5 users (size 0 ignored): cumulative 0.5, 0.8, 0.95 -> 3 at 90%
    assert percentile_length(np.array([999, 50, 30, 15, 5]), 0.9, 30) == 3
    assert percentile_length(np.array([999, 50, 30, 15, 5]), 0.9, 2) == 2  # capped
    assert percentile_length(np.array([5, -1, -2]), 0.9, 30) == 1  # nothing positive: 1


def test_accounting_adds_up_per_group_over_the_three_phases():
    groups = SVSM().privacy_accounting(3.0)
    assert len(groups) == 3
    for i, g in enumerate(groups):
        assert g["epsilon"] == 3.0 and math.isclose(sum(g["per_round"]), 3.0) and g["per_round"][i] == 3.0
    assert SVSM(oracle="olh").round_oracles(3.0, Domain.enumerable(64))[0][0] == "rounds 0-2"


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_a_run_reports_its_phases_and_finds_the_head(simulation):
    offsets, members = zipf_sets(20_000, 200, 1.5, 3.0, np.random.default_rng(0))
    pop = Population.from_sets(offsets, members, 200)
    result = SVSM(k=4).run(pop, 4.0, np.random.default_rng(1), simulation=simulation)["top-k"]
    assert [r["users"] for r in result.rounds] == [8000, 2000, 10_000]
    assert [r["epsilon"] for r in result.rounds] == [4.0] * 3 and result.rounds[2]["ell"] >= 1
    assert set(result.items.tolist()) == {0, 1, 2, 3}  # shares 0.60, 0.27, 0.17, 0.12 vs 0.09 next
    assert result.items.dtype == np.uint64 and result.k == 4


def test_one_item_per_user_is_the_singleton_case_and_bit_strings_are_refused():
    result = SVSM(k=2).run(Population(np.array([6000, 3000, 500, 500])), 4.0, np.random.default_rng(0))["top-k"]
    assert result.items.tolist() == [0, 1] and result.n == 10_000
    pop = Population(np.array([1]), domain=Domain.bit_strings(64), values=np.array([5], dtype=np.uint64))
    with pytest.raises(ValueError, match="enumerates its domain"):
        SVSM().run(pop, 1.0, np.random.default_rng(0))
