"""ldpminer: LDPMiner's two phases on set-valued users: accounting, identification, the phase-2
estimates' exact mean and variance, validate's refusals."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from scipy.stats import chi2

from ldpbench.errors import SpecError
from ldpbench.spec.validate import load_spec
from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols import padding_sampling as ps
from ldpbench_plugins.protocols.ldpminer import LDPMiner


def _planted(users: int) -> Population:
    """Users of 6 kinds, each ``users`` strong: {0,1,2}, {0,1,3}, {0,2,3}, {1,3}, {0,4}, {5}: the
    heavy items 0..3 (shares 1/2, 1/2, 1/3, 1/2), 4 and 5 (1/6 each), 6..49 held by nobody; no set
    holds more than 3 of the heavy items."""
    kinds = [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 3], [0, 4], [5]]
    sizes = np.tile([len(s) for s in kinds], users)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return Population.from_sets(offsets, np.tile(np.concatenate(kinds), users), 50)


def test_accounting_adds_up_for_both_splits():
    (group,) = LDPMiner().privacy_accounting(3.0)
    assert group["epsilon"] == 3.0 and group["per_round"] == [1.5, 1.5]
    assert LDPMiner(share=0.25).phase_budgets(4.0) == (1.0, 3.0)
    groups = LDPMiner(split="users").privacy_accounting(2.0)
    assert [g["per_round"] for g in groups] == [[2.0, 0.0], [0.0, 2.0]]
    assert [e for _, _, e in LDPMiner(oracle="olh").round_oracles(2.0, Domain.enumerable(64))] == [1.0, 1.0]
    assert LDPMiner().tags().records == ("set", "item") and LDPMiner().tags().enumerates_domain


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_the_phase_two_estimates_have_the_exact_mean_and_variance(simulation):
    # 12,000 users, eps = 4 split 2 + 2. Phase 1 (ell = 3) must keep C = {0, 1, 2, 3}: item 2's
    # sampled share 1/9 is 5 sd (of the difference of two OLH estimates at eps 2) above items 4
    # and 5's 1/18. Phase 2 (ell_2 = 3; GRR over 4 + 3 values at the amplified budget) is then
    # unbiased: no set holds more than 3 candidates. Over R = 20 runs the mean of each estimate is
    # within 4.5 sd (sd/sqrt(R), the exact variance of padding_sampling.psfo_moments) of the
    # truth, and (R - 1) s^2 / var lies between chi2(R - 1)'s 1e-5 and 1 - 1e-5 quantiles; a
    # missing ell_2 factor is 100+ sd off the mean and 9 times the variance.
    pop, reps = _planted(2000), 20
    proto = LDPMiner(k=4, candidates=4, ell=3)
    draws = np.empty((reps, 4))
    for r in range(reps):
        result = proto.run(pop, 4.0, np.random.default_rng(100 + r), simulation=simulation)["top-k"]
        assert sorted(result.items.tolist()) == [0, 1, 2, 3]
        assert result.rounds[1]["oracle"] == "grr" and result.rounds[1]["ell"] == 3
        draws[r, result.items.astype(int)] = result.frequencies
    lookup = np.full(50, -1)
    lookup[:4] = np.arange(4)
    restricted = Population.from_sets(*ps.restrict(pop.offsets, pop.members, lookup), 4)
    p, q = ps.oracle_probabilities("grr", 4, 3, 2.0)
    mean, var = ps.psfo_moments(restricted, 3, p, q)
    assert np.allclose(mean, pop.frequencies[:4])  # unbiased: no truncation
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4.5 * np.sqrt(var / reps))
    ratio = (reps - 1) * draws.var(axis=0, ddof=1) / var
    assert np.all((ratio > chi2.ppf(1e-5, reps - 1)) & (ratio < chi2.ppf(1 - 1e-5, reps - 1))), ratio


def test_identification_with_users_split_and_the_papers_budget_split():
    # The head 0..3 of the planted population (shares >= 1/3 against 1/6 for items 4, 5), eps = 2:
    # phase 1 keeps 2k = 8 candidates, phase 2's gap between item 2 and item 4 is ~8 sd (split
    # budget: GRR at the amplified eps_2 = 1, 12,000 users). Found in every one of 5 runs per split.
    pop = _planted(2000)
    for split in ("budget", "users"):
        for r in range(5):
            result = LDPMiner(k=4, split=split).run(pop, 2.0, np.random.default_rng(r))["top-k"]
            assert set(result.items.tolist()) == {0, 1, 2, 3}, (split, r)
            assert result.items.dtype == np.uint64 and result.n == 12_000
    rounds = LDPMiner(k=4, split="users").run(pop, 2.0, np.random.default_rng(0))["top-k"].rounds
    assert [r["users"] for r in rounds] == [6000, 6000] and [r["epsilon"] for r in rounds] == [2.0, 2.0]


def test_one_item_per_user_is_the_singleton_case_and_bit_strings_are_refused():
    result = LDPMiner(k=2, ell=1).run(Population(np.array([6000, 3000, 500, 500])), 4.0, np.random.default_rng(0))
    assert result["top-k"].items.tolist() == [0, 1]
    pop = Population(np.array([1]), domain=Domain.bit_strings(64), values=np.array([5], dtype=np.uint64))
    with pytest.raises(ValueError, match="enumerates its domain"):
        LDPMiner().run(pop, 1.0, np.random.default_rng(0))


SPEC = """\
name: miner
seed: 7
repeats: 1
datasets:
  - zipf-sets: {n: 2000, d: 50}
epsilons: [2]
oracles:
  - ldpminer: {k: 4}
pipelines: [base]
metrics: [topk-f1]
"""


def _problems(tmp_path, plugins, text):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    return info.value.problems


def test_validate_takes_sets_and_refuses_bit_strings_and_frequency_metrics(tmp_path, plugins):
    path = tmp_path / "good.yaml"
    path.write_text(SPEC)
    assert [m.label for m in load_spec(path, plugins).mechanisms] == ["ldpminer(k=4)"]
    (found,) = _problems(
        tmp_path, plugins, SPEC.replace("zipf-sets: {n: 2000, d: 50}", "zipf-bits: {bits: 64, n: 2000, support: 50}")
    )
    assert found.split(": ", 1)[0].endswith("spec.yaml:8") and "'ldpminer' enumerates its domain" in found
    (found,) = _problems(tmp_path, plugins, SPEC.replace("metrics: [topk-f1]", "metrics: [mse]"))
    assert found.split(": ", 1)[0].endswith("spec.yaml:10")
    assert "protocol 'ldpminer' returns identified-items" in found
