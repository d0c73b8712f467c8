"""The attack contract (ldpbench/types/attack.py) and the poisoned truth (types/data.py Poisoning)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Attack, AttackTags, Poisoning


class Fine(Attack):
    name = "fine"
    oracles = ("grr",)

    def craft(self, oracle, targets, m, rng):
        return np.resize(targets, m)


def test_tags_read_the_oracles_and_the_registration_rule():
    assert Fine().tags() == AttackTags(oracles=("grr",))
    assert Attack.contract_problems(Fine) == []

    class Bad(Fine):
        name = "bad"
        oracles = ["grr"]

    assert Attack.contract_problems(Bad) == ["oracles must be a tuple of oracle names, got ['grr']"]

    class Rounds(Fine):
        name = "rounds"
        protocols = ("pem",)

    assert Rounds().tags() == AttackTags(oracles=("grr",), protocols=("pem",))

    class BadRounds(Fine):
        name = "bad-rounds"
        protocols = "pem"

    assert Attack.contract_problems(BadRounds) == ["protocols must be a tuple of protocol names, got 'pem'"]


def test_craft_hashed_is_not_defined_by_default():
    from ldpbench.errors import NotApplicable

    with pytest.raises(NotApplicable, match="does not craft the reports of a protocol's rounds"):
        Fine().craft_hashed(np.zeros(1, dtype=np.uint64), 4, 1.0, 3, np.random.default_rng(0))


def test_poisoning_is_read_only_and_sorted():
    plan = Poisoning(attack="mga", targets=[2, 7], fake_users=3, beta=0.1)
    assert not plan.targets.flags.writeable and plan.targets.dtype == np.int64
    with pytest.raises(ValueError, match="strictly increasing"):
        Poisoning(attack="mga", targets=[7, 2], fake_users=3, beta=0.1)
    with pytest.raises(ValueError, match="non-negative"):
        Poisoning(attack="mga", targets=[2], fake_users=-1, beta=0.1)
