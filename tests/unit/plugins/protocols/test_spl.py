"""SPL (plugins/protocols/spl.py): every attribute at epsilon / a; its estimates against the
oracle's formula, its whole report's exact epsilon."""

from __future__ import annotations

import numpy as np
import pytest
from support_multidim import SIZES, check_moments, moments, population

from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.protocols._multidim import attribute_log_ratio, max_log_ratio
from ldpbench_plugins.protocols.spl import SPL

ORACLES = {"grr": GRR, "oue": OUE}


@pytest.mark.parametrize("oracle", ["grr", "oue"])
@pytest.mark.parametrize(("simulation", "repeats", "tol"), [("aggregate", 400, 0.3), ("per-user", 120, 0.55)])
def test_each_attribute_is_unbiased_with_the_oracles_variance_at_a_share_of_the_budget(
    oracle, simulation, repeats, tol
):
    # summed sample variance over R repeats: sd <= sqrt(2 / (R - 1)) = 0.071 (R = 400), 0.13 (R = 120):
    # the tolerances are > 4 sigma; the whole budget per attribute (variance / 2.5 or less) fails
    pop, eps = population(), 2.0
    found = moments(SPL(oracle=oracle), pop, eps, repeats, simulation)
    check_moments(pop, found, lambda j, f: ORACLES[oracle](SIZES[j], eps / 2).variance(pop.n, f), repeats, tol)


def test_outputs_are_labelled_by_attribute_and_carry_what_post_processors_need():
    out = SPL(oracle="grr").run(population(500), 1.0, np.random.default_rng(0))
    assert list(out) == ["x", "y"] and [e.d for e in out.values()] == list(SIZES)
    assert all(e.mechanism == "spl" and e.epsilon == 1.0 and e.n == 500 for e in out.values())
    assert out["y"].channel is not None and out["y"].report_histogram is not None


@pytest.mark.parametrize("oracle", ["grr", "oue"])
def test_the_whole_report_is_exactly_epsilon_ldp(oracle):
    P = SPL(oracle=oracle).report_table((2, 3), 1.0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert max_log_ratio(P) == pytest.approx(1.0)  # composition is tight: both attributes change
    assert attribute_log_ratio(P, (2, 3)) == pytest.approx(0.5)
