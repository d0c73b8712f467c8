"""The multidimensional protocol checks of the conformance kit (ldpbench/testing/checks/multidim.py):
the built-in solutions pass them, and broken ones fail the check that concerns them, by name."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import check_protocol, protocol_checks
from ldpbench.testing.checks.multidim import attribute_log_ratio, max_log_ratio
from ldpbench_plugins.protocols.smp import SMP
from ldpbench_plugins.protocols.spl import SPL


class BiasedSPL(SPL):
    """Adds 0.1 to every estimate: about 14 standard errors of 60 runs (SPL[GRR] at eps/2 over
    [3], n = 2,000: sd 0.056 per run), where the check stops at 4.5."""

    name = "biased-spl"

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        out = super().run(population, epsilon, rng, simulation=simulation)
        return {k: e.replace(frequencies=e.frequencies + 0.1) for k, e in out.items()}


class LeakySPL(SPL):
    """Reports every attribute at the whole epsilon but declares epsilon / a."""

    name = "leaky-spl"

    def report_table(self, sizes, epsilon):
        return super().report_table(sizes, epsilon * len(sizes))


class OverclaimingSPL(SPL):
    """Declares a bound over any two records above what composing the attributes spends."""

    name = "overclaiming-spl"

    def record_accounting(self, epsilon, sizes):
        return {**super().record_accounting(epsilon, sizes), "any_records": 2 * epsilon}


class SwappedSMP(SMP):
    """Draws reports of the other value of a binary attribute: not the law its table states."""

    name = "swapped-smp"

    def perturb_records(self, rows, sizes, epsilon, rng):
        return super().perturb_records(1 - np.asarray(rows), sizes, epsilon, rng)


@pytest.mark.parametrize("name", ["spl", "rs-rfd"])
def test_built_in_solutions_pass_every_multidimensional_check(name):
    outcome = check_protocol(name)
    assert {k: v for k, v in outcome.items() if "multidim" in k} == {
        "check_protocol_multidim_accounting": "passed",
        "check_protocol_multidim_unbiased": "passed",
        "check_protocol_multidim_whole_report": "passed",
    }


@pytest.mark.parametrize(
    "protocol, failing, match",
    [
        (BiasedSPL, "check_protocol_multidim_unbiased", "attribute a0 \\(aggregate\\) biased"),
        (
            LeakySPL,
            "check_protocol_multidim_whole_report",
            "any two records \\(2, 2\\): exact epsilon 2.0000 > declared 1.0000",
        ),
        (OverclaimingSPL, "check_protocol_multidim_accounting", "any_records = 2 is not between"),
        (SwappedSMP, "check_protocol_multidim_whole_report", "does not follow report_table"),
    ],
)
def test_a_broken_solution_fails_its_check(protocol, failing, match):
    checks = dict(protocol_checks(protocol))
    with pytest.raises(AssertionError, match=match):
        checks[failing]()


def test_the_log_ratios_of_a_known_law():
    rr = np.array([[0.75, 0.25], [0.25, 0.75]])  # binary randomized response at ln 3, twice
    P = np.kron(rr, rr)
    assert max_log_ratio(P) == pytest.approx(2 * np.log(3))
    assert attribute_log_ratio(P, (2, 2)) == pytest.approx(np.log(3))
