"""Oracle constants, parameters and the estimate formula (docs/algorithms.md §8.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench import build_plugins
from ldpbench.engine.simulate import simulate
from ldpbench.errors import ParamError
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.hr import HR, hadamard_size
from ldpbench_plugins.oracles.olh import OLH, default_range, olh_constants
from ldpbench_plugins.oracles.oue import OUE

EPS = (0.5, 1.0, 2.0, 4.0)

# docs/algorithms.md §8.1: n Var (fraction scale, f_v = 0), d = 16
A1 = {
    "oue": (15.670792356, 3.682694377, 0.724061661, 0.076021830),
    "hr": (16.670792356, 4.682694377, 1.724061661, 1.076021830),
    "grr": (37.184554180, 5.662430017, 0.523984230, 0.023878817),
}
CLASSES = {"oue": OUE, "hr": HR, "grr": GRR}


@pytest.mark.parametrize("name", sorted(A1))
def test_a1_constant_of_the_variance(name):
    for eps, want in zip(EPS, A1[name]):
        oracle = CLASSES[name](d=16, epsilon=eps)
        got = float(oracle.variance(1, np.zeros(1))[0])
        # the published constants have 9 decimals: compare to them, and to the closed form to 1e-12
        assert got == pytest.approx(want, abs=6e-10)
        e = math.exp(eps)
        closed = {"oue": 4 * e / (e - 1) ** 2, "hr": (e + 1) ** 2 / (e - 1) ** 2, "grr": (e + 14) / (e - 1) ** 2}
        assert got == pytest.approx(closed[name], rel=1e-12)
        assert oracle.noise_variance(1) == pytest.approx(closed[name], rel=1e-12)


def test_a1_identities_hr_is_oue_plus_one_and_olh_at_real_optimum_is_oue():
    for eps in EPS:
        hr, oue = HR(d=16, epsilon=eps), OUE(d=16, epsilon=eps)
        assert hr.variance(1, np.zeros(1))[0] == pytest.approx(oue.variance(1, np.zeros(1))[0] + 1, rel=1e-12)
        # OLH with the real g = e^eps + 1: same p*, q* as OUE, hence the same constant and f coefficient 1
        p, q = olh_constants(eps, math.exp(eps) + 1)
        assert p == pytest.approx(0.5, rel=1e-12) and q == pytest.approx(oue.q_star, rel=1e-12)
        f_coefficient = (p - q) * (1 - p - q) / (p - q) ** 2
        assert f_coefficient == pytest.approx(1.0, rel=1e-12)


def test_a1_f_term_of_each_oracle():
    f = np.array([0.0, 0.25, 1.0])
    for eps in EPS:
        e = math.exp(eps)
        grr = GRR(d=16, epsilon=eps).variance(1, f)
        np.testing.assert_allclose(grr, (e + 14) / (e - 1) ** 2 + f * 14 / (e - 1), rtol=1e-12)
        np.testing.assert_allclose(OUE(d=16, epsilon=eps).variance(1, f), 4 * e / (e - 1) ** 2 + f, rtol=1e-12)
        np.testing.assert_allclose(HR(d=16, epsilon=eps).variance(1, f), (e + 1) ** 2 / (e - 1) ** 2 - f, rtol=1e-12)
        olh = OLH(d=16, epsilon=eps)
        g = olh.buckets
        want = (e + g - 1) ** 2 / ((g - 1) * (e - 1) ** 2) + f * ((g - 1) ** 2 - e) / ((g - 1) * (e - 1))
        np.testing.assert_allclose(olh.variance(1, f), want, rtol=1e-12)
        np.testing.assert_allclose(olh.variance(100, f), want / 100, rtol=1e-12)


def test_a2_support_probabilities():
    for eps in EPS:
        e = math.exp(eps)
        for d in (2, 7, 16):
            grr = GRR(d=d, epsilon=eps)
            assert grr.p_star == pytest.approx(e / (e + d - 1), rel=1e-12)
            assert grr.q_star == pytest.approx(1 / (e + d - 1), rel=1e-12)
        oue = OUE(d=16, epsilon=eps)
        assert oue.p_star == 0.5 and oue.q_star == pytest.approx(1 / (e + 1), rel=1e-12)
        olh = OLH(d=16, epsilon=eps)
        g = round(e) + 1
        assert olh.buckets == g
        assert olh.p_star == pytest.approx(e / (e + g - 1), rel=1e-12) and olh.q_star == 1 / g
        hr = HR(d=16, epsilon=eps)
        assert hr.p_star == pytest.approx(e / (e + 1), rel=1e-12) and hr.q_star == 0.5


def test_a2_olh_default_range_and_explicit_g():
    assert [default_range(eps) for eps in (1.0, 2.0, 0.5)] == [4, 8, 3]
    assert OLH(d=10, epsilon=1.0).g == 0  # the parameter is stored as given
    olh = OLH(d=10, epsilon=1.0, g=2)
    assert olh.buckets == 2 and olh.p_star == pytest.approx(HR(d=10, epsilon=1.0).p_star, rel=1e-15)


def test_a2_hadamard_size():
    assert [hadamard_size(d) for d in (30, 31, 32, 1, 3, 41270)] == [32, 32, 64, 2, 4, 65536]
    assert HR(d=32, epsilon=1.0).size == 64 and HR(d=32, epsilon=1.0).bits == 6


def test_a6_round_trip_with_hand_made_reports():
    grr = GRR(d=3, epsilon=math.log(2))
    reports = np.array([0, 0, 1, 2])
    c = grr.support_counts(reports)
    np.testing.assert_array_equal(c, [2, 1, 1])
    p, q = 2 / 4, 1 / 4  # e = 2, d = 3
    est = grr.estimate(c, 4)
    want = (c / 4 - q) / (p - q)
    np.testing.assert_allclose(est.frequencies, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.frequencies, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(est.counts, 4 * want, rtol=1e-12, atol=1e-12)
    assert est.n == 4 and est.p_star == pytest.approx(p) and est.q_star == pytest.approx(q)


def test_a6_hr_support_counts_of_hand_made_reports():
    hr = HR(d=3, epsilon=1.0)  # K = 4; C_0 = {0, 2} (row 1), C_1 = {0, 1} (row 2), C_2 = {0, 3} (row 3)
    reports = np.array([0, 1, 2, 3, 3])
    np.testing.assert_array_equal(hr.support_counts(reports), [2, 2, 3])
    np.testing.assert_array_equal(hr.report_histogram(reports), [1, 1, 1, 2])


def test_a7_grr_estimates_sum_to_one_and_norm_is_a_no_op():
    plugins = build_plugins()
    rng = np.random.default_rng(7)
    counts = rng.multinomial(5000, rng.dirichlet(np.ones(40)))
    norm = plugins.create("postprocessor", "norm") if "norm" in plugins.registry("postprocessor") else None
    for eps in (0.5, 1.0, 4.0):
        oracle = GRR(d=40, epsilon=eps)
        for path in ("aggregate", "per-user"):
            for _ in range(5):
                est = simulate(oracle, counts, rng, path)
                assert abs(est.frequencies.sum() - 1) <= 1e-12
                if norm is not None:
                    np.testing.assert_allclose(norm.apply(est, rng).frequencies, est.frequencies, atol=1e-12)


def test_infinite_budget_reports_the_truth():
    rng = np.random.default_rng(1)
    values = rng.integers(0, 9, 1000)
    grr = GRR(d=9, epsilon=math.inf)
    assert (grr.p_star, grr.q_star) == (1.0, 0.0)
    np.testing.assert_array_equal(grr.perturb(values, rng), values)
    counts = np.bincount(values, minlength=9)
    np.testing.assert_array_equal(grr.sample_support_counts(counts, rng), counts)
    assert OUE(d=9, epsilon=math.inf).q_star == 0.0
    assert HR(d=9, epsilon=math.inf).p_star == 1.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: GRR(d=5, epsilon=0.0),
        lambda: GRR(d=5, epsilon=-1.0),
        lambda: GRR(d=5, epsilon=float("nan")),
        lambda: GRR(d=1, epsilon=1.0),
        lambda: OUE(d=0, epsilon=1.0),
        lambda: OLH(d=5, epsilon=1.0, g=1),
        lambda: OLH(d=5, epsilon=math.inf),
        lambda: HR(d=5, epsilon=0.0),
    ],
)
def test_user_mistakes_raise_param_errors(make):
    with pytest.raises(ParamError):
        make()


def test_registry_validates_the_olh_parameter():
    plugins = build_plugins()
    assert plugins.create("oracle", "olh", {"g": 5}, d=10, epsilon=1.0).buckets == 5
    with pytest.raises(ParamError):
        plugins.create("oracle", "olh", {"g": -2}, d=10, epsilon=1.0)
    with pytest.raises(ParamError):
        plugins.create("oracle", "olh", {"buckets": 3}, d=10, epsilon=1.0)


@pytest.mark.parametrize("cls", [GRR, OUE, OLH, HR])
def test_perturb_rejects_values_outside_the_domain(cls):
    oracle = cls(d=4, epsilon=1.0)
    rng = np.random.default_rng(0)
    for bad in (np.array([0, 4]), np.array([-1]), np.array([0.5])):
        with pytest.raises(ValueError):
            oracle.perturb(bad, rng)
    with pytest.raises(ValueError):
        oracle.sample_support_counts(np.array([1, 2, 3]), rng)
