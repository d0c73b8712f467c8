"""svsm-itemsets: SVSM's itemset half: the candidate itemsets, the users' contained candidates,
the last phase's exact mean and variance, identification of planted itemsets, accounting,
validate's pairing of the result kind."""

from __future__ import annotations

import itertools
import math
import textwrap

import numpy as np
import pytest
from scipy.stats import chi2

from ldpbench.errors import SpecError
from ldpbench.spec.validate import load_spec
from ldpbench.types import Domain, Population
from ldpbench_plugins.metrics.itemsets import ItemsetF1, ItemsetNCR
from ldpbench_plugins.protocols import padding_sampling as ps
from ldpbench_plugins.protocols.svsm_itemsets import SVSMItemsets, candidate_itemsets, held_candidates


def _planted(n: int) -> Population:
    """{0,1,2} 30% of the users, {0,1} 20%, {0,3} 15%, {1,3} 10%, one tail item of 6..39 the rest:
    the top 8 itemsets are {0} 65%, {1} 60%, {0,1} 50%, {2}, {0,2}, {1,2}, {0,1,2} 30% each, {3}
    25%, then {0,3} 15% (a tail item: under 1%)."""
    kinds = [[0, 1, 2]] * 30 + [[0, 1]] * 20 + [[0, 3]] * 15 + [[1, 3]] * 10 + [[6 + j] for j in range(25)]
    sets = [kinds[i % 100] if i % 100 < 75 else [6 + i % 34] for i in range(n)]
    sizes = np.array([len(s) for s in sets])
    return Population.from_sets(np.concatenate([[0], np.cumsum(sizes)]), np.concatenate(sets), 40)


def test_the_candidates_are_the_largest_products_of_two_items_or_more():
    guess = np.array([0.9, 0.8, 0.45, 0.3, 0.05, -0.1])  # a negative estimate counts 0
    masks, products = candidate_itemsets(guess, 9)
    brute = sorted(
        (float(np.prod(np.clip(guess, 0, None)[list(c)])), c)
        for size in range(2, 7)
        for c in itertools.combinations(range(6), size)
    )[::-1]
    brute = [(p, c) for p, c in brute if p > 0][:9]
    assert np.allclose(products, [p for p, _ in brute])
    assert [sum(1 << j for j in c) for _, c in brute] == masks.tolist()


def test_each_user_holds_the_candidates_their_set_contains():
    offsets, members = np.array([0, 3, 5, 5, 7]), np.array([4, 0, 9, 0, 4, 9, 7])  # {0,4,9} {0,4} {} {7,9}
    positions = np.array([0, 4, 9])  # bits 0, 1, 2
    cand = np.array([0b011, 0b101, 0b111, 0b110], dtype=np.uint64)  # {0,4} {0,9} {0,4,9} {4,9}
    o, m = held_candidates(offsets, members, positions, cand, 10)
    assert [sorted(m[o[i] : o[i + 1]].tolist()) for i in range(4)] == [[0, 1, 2, 3], [0], [], []]


def test_accounting_adds_up_over_the_five_phases():
    groups = SVSMItemsets().privacy_accounting(2.0)
    assert len(groups) == 5
    assert all(g["epsilon"] == 2.0 and math.isclose(sum(g["per_round"]), 2.0) for g in groups)
    assert [g["per_round"].index(2.0) for g in groups] == [0, 1, 2, 3, 4]
    assert SVSMItemsets().group_sizes(10_000) == (4000, 1200, 4800)
    assert SVSMItemsets().tags().result == "identified-itemsets"


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_the_last_phase_has_the_exact_mean_and_variance(simulation):
    # Candidates {0,1} {0,2} {1,2} {0,1,2} {0,3} {2,3} over 6,000 planted users; no user holds more
    # than 4, so with ell = 4 and no correction the estimates are unbiased (shares 0.5, 0.3, 0.3,
    # 0.3, 0.15, 0). Over R = 20 runs at eps = 2 (GRR over 6 + 4 values, amplified) each mean is
    # within 4.5 sd (padding_sampling.psfo_moments' exact variance / R) and (R-1) s^2 / var within
    # chi2(R-1)'s 1e-5 and 1 - 1e-5 quantiles; the reference's / 0.9 alone is 7+ sd off the mean.
    pop, reps = _planted(6000), 20
    cand = np.array([0b0011, 0b0101, 0b0110, 0b0111, 0b1001, 0b1100], dtype=np.uint64)
    positions = np.arange(4)
    proto = SVSMItemsets(correction="none")
    draws = np.array(
        [
            proto.estimate_candidates(
                pop.offsets, pop.members, positions, cand, 40, 4, 2.0, np.random.default_rng(r), simulation
            )[0]
            for r in range(reps)
        ]
    )
    held = Population.from_sets(*held_candidates(pop.offsets, pop.members, positions, cand, 40), 6)
    p, q = ps.oracle_probabilities("grr", 6, 4, 2.0)
    mean, var = ps.psfo_moments(held, 4, p, q)
    assert np.allclose(mean, [0.5, 0.3, 0.3, 0.3, 0.15, 0.0])
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4.5 * np.sqrt(var / reps))
    ratio = (reps - 1) * draws.var(axis=0, ddof=1) / var
    assert np.all((ratio > chi2.ppf(1e-5, reps - 1)) & (ratio < chi2.ppf(1 - 1e-5, reps - 1))), ratio


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_the_planted_top_itemsets_are_identified(simulation):
    # 30,000 users, eps = 4, k = 8: the 8th itemset ({3}, 25%) against the 9th ({0,3}, 15%) is
    # many sd apart in every phase (the item estimates' sd is about 0.02 with the 6,000 users of
    # SVIM's last phase). All 8 in each of 3 runs (measured on 20 other seeds, both paths: 40 of 40).
    pop = _planted(30_000)
    for r in range(3):
        result = SVSMItemsets(k=8).run(pop, 4.0, np.random.default_rng(r), simulation=simulation)["top-k"]
        assert ItemsetF1().score(pop, result, None) == 1.0 and ItemsetNCR().score(pop, result, None) == 1.0
        assert set(result.itemsets()) == {(0,), (1,), (0, 1), (2,), (0, 2), (1, 2), (0, 1, 2), (3,)}
        assert [r["phase"] for r in result.rounds][3:] == ["itemset size", "itemset estimates"]
        assert result.items.tolist() == list(range(8)) and np.all(np.diff(result.frequencies) <= 0)
    pop = Population(np.array([1]), domain=Domain.bit_strings(64), values=np.array([5], dtype=np.uint64))
    with pytest.raises(ValueError, match="enumerates its domain"):
        SVSMItemsets().run(pop, 1.0, np.random.default_rng(0))


SPEC = """\
name: itemsets
seed: 7
repeats: 1
datasets:
  - zipf-sets: {n: 2000, d: 50}
epsilons: [2]
oracles:
  - svsm-itemsets: {k: 4}
pipelines: [base]
metrics: [itemset-f1, bits-per-user]
"""


def test_validate_pairs_the_itemset_result_with_itemset_metrics_only(tmp_path, plugins):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    assert [m.label for m in load_spec(path, plugins).mechanisms] == ["svsm-itemsets(k=4)"]
    path.write_text(textwrap.dedent(SPEC.replace("metrics: [itemset-f1, bits-per-user]", "metrics: [topk-f1]")))
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    (found,) = info.value.problems
    assert found.split(": ", 1)[0].endswith("spec.yaml:10")
    assert "protocol 'svsm-itemsets' returns identified-itemsets" in found
