"""The protocol checks of the conformance kit (ldpbench/testing/checks/protocol.py) pass PEM and
fail broken heavy-hitter protocols, naming the check."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import check_protocol, protocol_checks
from ldpbench_plugins.protocols._candidates import RoundOLH
from ldpbench_plugins.protocols.pem import PEM


class LeakyRound(RoundOLH):
    """Sends the true hash every time: no privacy at all."""

    name = "leaky-round"

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        from ldpbench_plugins.oracles import _hashing
        from ldpbench_plugins.protocols._candidates import item_keys

        y = _hashing.hash_pairs(reports.seeds, item_keys(np.asarray(values, dtype=np.uint64)), self.buckets)
        return type(reports)(seeds=reports.seeds, y=y)


class LeakyPEM(PEM):
    name = "leaky-pem"

    def round_oracles(self, epsilon, domain):
        return [("every round", LeakyRound, epsilon)]


class OverspendingPEM(PEM):
    """Declares every group at epsilon in every round."""

    name = "overspending-pem"

    def round_accounting(self, epsilon, domain):
        groups = super().round_accounting(epsilon, domain)
        return [{**g, "per_round": [epsilon] * len(g["per_round"])} for g in groups]


class BlindPEM(PEM):
    """Returns k random items."""

    name = "blind-pem"

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        (result,) = super().run(population, epsilon, rng, simulation=simulation).values()
        items = np.unique(rng.integers(0, 2**32, size=result.k, dtype=np.uint64))
        return {"top-k": result.replace(items=items, frequencies=np.full(items.size, 0.01))}


def test_pem_passes_every_check():
    outcome = check_protocol(PEM)
    special = ("longitudinal", "multidim")
    assert {v for k, v in outcome.items() if not any(s in k for s in special)} == {"passed"}
    assert all(
        v.startswith(("skipped: the checks concern longitudinal", "skipped: the checks concern multidim"))
        for k, v in outcome.items()
        if any(s in k for s in special)
    )


@pytest.mark.parametrize(
    "protocol, failing, match",
    [
        (LeakyPEM, "check_protocol_round_oracles_ldp", "exact audit|empirical audit says leak"),
        (OverspendingPEM, "check_protocol_accounting", "per_round adds up to"),
        (BlindPEM, "check_protocol_identifies_planted", "found the 4 planted items in 0 of 5 runs"),
    ],
)
def test_a_broken_protocol_fails_its_check(protocol, failing, match):
    checks = dict(protocol_checks(protocol))
    with pytest.raises(AssertionError, match=match):
        checks[failing]()


def test_a_frequency_protocol_is_not_applicable():
    outcome = check_protocol("blender")
    assert all(
        v.startswith(
            (
                "skipped: the checks concern heavy-hitter protocols",
                "skipped: the checks concern longitudinal",
                "skipped: the checks concern multidim",
            )
        )
        for v in outcome.values()
    )
