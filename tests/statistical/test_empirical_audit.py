"""The empirical audit of the correct built-in oracles is consistent with their claimed epsilon."""

from __future__ import annotations

import pytest
from support import audit_oracle, plugins_with_fixtures

BUILTIN = ("grr", "olh", "oue", "hr")


@pytest.fixture(scope="module")
def plugins():
    return plugins_with_fixtures()


@pytest.mark.parametrize("name", BUILTIN + ("ss",))
def test_correct_oracles_are_consistent_with_their_claim(plugins, name):
    audit = audit_oracle(plugins, name)
    assert audit.verdict == "consistent"
    for b in audit.budgets:
        assert b.eps_lb <= b.epsilon
        # ... and the audit is tight: the best attack nearly reaches the claim.
        assert b.eps_lb > 0.5 * b.epsilon
