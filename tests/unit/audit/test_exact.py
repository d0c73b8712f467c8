"""The exact epsilon-LDP audit: sizes beyond d = 2, 3 and the declared parameter space."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import plugins_with_fixtures

from ldpbench.audit import exact_audit
from ldpbench.audit.exact import sample_params, worst_ratio
from ldpbench.params import Param
from ldpbench.testing import check_oracle
from ldpbench_plugins.oracles.grr import GRR

EPSILONS = (0.5, 1.0, 4.0)


@pytest.fixture(scope="module")
def fixture_plugins():
    return plugins_with_fixtures()  # the built-ins and the leaky oracles of tests/fixtures/


def test_worst_ratio_finds_the_row_and_the_inputs():
    P = np.array([[0.5, 0.25, 0.0], [0.5, 0.75, 1.0]])
    ratio, y, v, w = worst_ratio(P)
    assert ratio == math.inf and (y, v, w) == (0, 0, 2)
    ratio, y, v, w = worst_ratio(P[:, :2])
    assert ratio == pytest.approx(2.0) and (y, v, w) == (0, 0, 1)


@pytest.mark.parametrize("name", ["grr", "olh", "oue", "hr", "ss", "sue", "blh", "adp"])
def test_correct_oracles_pass_at_every_enumerable_size(fixture_plugins, name):
    audit = exact_audit(fixture_plugins.get("oracle", name).cls, EPSILONS)
    assert audit.passed, audit.summary()
    assert audit.domains == (2, 3, 4, 5, 6, 7, 8)
    worst = audit.worst()
    assert worst.ratio == pytest.approx(worst.bound, rel=1e-9)


@pytest.mark.parametrize("name", ["leaky-grr-2eps", "leaky-ss-2eps", "leaky-ss-window", "leaky-ue-bug"])
def test_leaky_oracles_fail(fixture_plugins, name):
    audit = exact_audit(fixture_plugins.get("oracle", name).cls, EPSILONS)
    assert not audit.passed
    assert "times likelier" in audit.summary()


def test_the_window_leak_hides_at_d_2_and_3_and_shows_where_k_is_2(fixture_plugins):
    cls = fixture_plugins.get("oracle", "leaky-ss-window").cls
    # The old kit audited only d = 2, 3, where k = 1 and the window leak is plain GRR.
    assert exact_audit(cls, EPSILONS, domains=(2, 3)).passed
    audit = exact_audit(cls, EPSILONS)
    assert {f.d for f in audit.failures} >= {5, 6, 7, 8}
    assert all(cls(d=f.d, epsilon=f.epsilon).subset_size >= 2 for f in audit.failures)
    assert audit.failures[0].ratio == math.inf


class BoostedGRR(GRR):
    """GRR spending ``boost * eps``: private at the default boost = 1, leaky at any other value."""

    name = "boosted-grr"
    params = (Param("boost", int, 1, "budget multiplier", min=1, max=3),)

    def __init__(self, d, epsilon, boost=1, **params):
        super().__init__(d=d, epsilon=boost * float(epsilon), boost=boost, **params)
        self.epsilon = float(epsilon)


def test_the_declared_parameter_space_is_sampled():
    assert exact_audit(BoostedGRR, EPSILONS, samples=0).passed  # defaults only: private
    audit = exact_audit(BoostedGRR, EPSILONS, seed=0)
    assert not audit.passed
    assert {f.params.get("boost") for f in audit.failures} <= {2, 3}
    # A value the user fixed is audited as given, not sampled.
    assert exact_audit(BoostedGRR, EPSILONS, values={"boost": 1}, fixed=("boost",)).passed


def test_parameter_draws_stay_inside_the_declaration():
    declared = (
        Param("g", int, 0, min=0),
        Param("mode", str, "a", choices=("a", "b", "c")),
        Param("scale", float, 1.0, min=0.5, max=2.0),
        Param("flag", bool, False),
        Param("prior", str, "gaussian", plugin_kind="prior"),
    )
    draws = sample_params(declared, {"flag": True}, np.random.default_rng(3), 20)
    assert draws[0] == {}
    for draw in draws[1:]:
        assert set(draw) == {"g", "mode", "scale"}
        assert 0 <= draw["g"] <= 16 and draw["mode"] in ("a", "b", "c") and 0.5 <= draw["scale"] <= 2.0
        for p in declared[:3]:
            p.coerce(draw[p.name])


def test_olh_is_audited_over_several_hash_ranges(fixture_plugins):
    audit = exact_audit(fixture_plugins.get("oracle", "olh").cls, EPSILONS)
    assert audit.passed and audit.settings >= 3
    assert any("g" in f.params for f in audit.findings)


def test_the_kit_check_catches_the_window_leak(fixture_plugins):
    # Before: 14 checks passed on this oracle. Now check_output_table_ldp fails, naming the table.
    with pytest.raises(AssertionError, match=r"check_output_table_ldp failed: .*not epsilon-LDP.*d=5"):
        check_oracle("leaky-ss-window", plugins=fixture_plugins)


def test_an_oracle_without_a_table_is_reported_not_crashed(fixture_plugins):
    audit = exact_audit(fixture_plugins.get("oracle", "opaque-grr").cls, EPSILONS)
    assert not audit.available and audit.passed
    assert "not implemented" in audit.summary()
