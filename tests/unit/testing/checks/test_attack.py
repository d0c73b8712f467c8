"""The attack checks of the conformance kit (ldpbench/testing/checks/attack.py) pass a sound attack
and fail broken ones, naming the check."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import CheckSkipped, attack_checks, check_attack
from ldpbench.types import Attack


class Floor(Attack):
    """Fake users holding the targets in turn, perturbed honestly."""

    name = "floor-kit"
    oracles = ("grr", "oue")

    def craft(self, oracle, targets, m, rng):
        return oracle.perturb(np.resize(targets, m), rng)


class Elsewhere(Floor):
    """Promotes item 0, whatever the targets."""

    name = "elsewhere"

    def craft(self, oracle, targets, m, rng):
        return oracle.perturb(np.zeros(m, dtype=np.int64), rng)


class Unseeded(Floor):
    name = "unseeded-attack"

    def craft(self, oracle, targets, m, rng):
        return oracle.perturb(np.resize(targets, m), np.random.default_rng())


class TooFew(Floor):
    name = "too-few"

    def craft(self, oracle, targets, m, rng):
        return oracle.perturb(np.resize(targets, m - 1), rng)


class Nowhere(Floor):
    name = "nowhere"
    oracles = ("no-such-oracle",)


def test_a_sound_attack_passes(plugins):
    results = check_attack(Floor, plugins=plugins, epsilons=(2.0,))
    # it declares no protocol: the rounds check is not applicable (pytest does not collect it)
    assert results.pop("check_attack_rounds").startswith("skipped: floor-kit declares no protocol")
    assert set(results.values()) == {"passed"}


@pytest.mark.parametrize(
    ("attack", "failing", "message"),
    [
        (Elsewhere, "check_attack_promotes_the_targets", "the targets are supported by"),
        (Unseeded, "check_attack_reproducible", "differ"),
        (TooFew, "check_attack_reports_aggregate", "not messages for 2000 fake users"),
    ],
)
def test_a_broken_attack_fails_its_check(plugins, attack, failing, message):
    checks = dict(attack_checks(attack, plugins=plugins, epsilons=(4.0,)))
    with pytest.raises(AssertionError, match=message):
        checks[failing]()


def test_an_attack_on_no_built_in_oracle_is_not_applicable(plugins):
    checks = dict(attack_checks(Nowhere, plugins=plugins))
    with pytest.raises(CheckSkipped, match="declares none of the oracles"):
        checks["check_attack_reports_aggregate"]()


class RoundsWrong(Floor):
    name = "rounds-wrong"
    protocols = ("pem",)

    def craft_hashed(self, keys, g, epsilon, m, rng):
        return rng.integers(0, 2**63, size=m).astype(np.uint64), np.full(m, g)  # values outside [0, g)


def test_the_rounds_check_catches_values_outside_the_hash_range(plugins):
    checks = dict(attack_checks(RoundsWrong, plugins=plugins, epsilons=(2.0,)))
    with pytest.raises(AssertionError, match=r"values outside \[0, g\)"):
        checks["check_attack_rounds"]()
