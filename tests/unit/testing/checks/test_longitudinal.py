"""The longitudinal checks of the conformance kit (ldpbench/testing/checks/longitudinal.py) pass
the built-in memoized protocols and fail broken ones, naming the check."""

from __future__ import annotations

import pytest

from ldpbench.testing import check_protocol, protocol_checks
from ldpbench_plugins.protocols import _longitudinal as lg
from ldpbench_plugins.protocols.l_memo import LGRR
from ldpbench_plugins.protocols.l_naive import NaiveRounds


class SilentGRR(LGRR):
    """Declares only the budget: no epsilon_inf, epsilon_1 or on_change."""

    name = "silent-grr"

    def privacy_accounting(self, epsilon):
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon)}]


class BiasedGRR(LGRR):
    """Scales every round's estimate by 1.3: biased on every item holding mass."""

    name = "biased-grr"

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        out = super().run(population, epsilon, rng, simulation=simulation)
        return {k: e.replace(frequencies=1.3 * e.frequencies) for k, e in out.items()}


class ForgetfulGRR(LGRR):
    """Claims L-GRR's eps_inf but re-randomizes afresh every round (no memoization)."""

    name = "forgetful-grr"

    def static_supports(self, d, epsilon, values, T, rng):  # noqa: N803
        p, q = lg.grr_layer(d, epsilon)
        return lg.static_supports(lg.Chain("grr", d, 1.0, 0.0, p, q), values, T, rng)


class UnauditableGRR(LGRR):
    name = "unauditable-grr"

    def static_supports(self, d, epsilon, values, T, rng):  # noqa: N803
        raise NotImplementedError


def test_memoized_and_naive_protocols_pass_the_longitudinal_checks():
    for cls in (LGRR, NaiveRounds):
        outcome = check_protocol(cls)
        assert {v for k, v in outcome.items() if "longitudinal" in k} == {"passed"}, outcome


@pytest.mark.parametrize(
    "protocol, failing, match",
    [
        (SilentGRR, "check_protocol_longitudinal_accounting", "does not declare epsilon_inf, epsilon_1, on_change"),
        (BiasedGRR, "check_protocol_longitudinal_rounds_unbiased", "standard errors"),
        # Fresh GRR at eps = 2 over 8 items, 16 reports: success ~0.99, bound ~6 > eps_inf = 2.
        (ForgetfulGRR, "check_protocol_longitudinal_averaging_audit", "LEAK: 16 reports"),
        (UnauditableGRR, "check_protocol_longitudinal_averaging_audit", "implement Protocol.static_supports"),
    ],
)
def test_a_broken_longitudinal_protocol_fails_its_check(protocol, failing, match):
    checks = dict(protocol_checks(protocol))
    with pytest.raises(AssertionError, match=match):
        checks[failing]()
