"""A protocol (ldpbench/types/protocol.py) inherits a documented privacy account."""

from __future__ import annotations

from ldpbench.types import Protocol


def test_a_protocol_inherits_a_documented_privacy_account():
    class Bare(Protocol):
        name = "bare"

        def run(self, population, epsilon, rng, *, simulation="aggregate"):
            return {}

    assert Bare().privacy_accounting(2.0) == [{"group": "all users", "model": "unknown", "epsilon": 2.0}]
