"""The built-in oracles side by side (docs/algorithms.md §8.1): the constants of the variance (A1),
the support probabilities (A2), exact output tables and channels (A3, A4), the closed forms of the
papers, the infinite budget, and the mistakes every oracle refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import assert_ldp_table, assert_support_constants, builtin_plugins

from ldpbench.errors import ParamError
from ldpbench_plugins.oracles._sketch import CountMeanSketch
from ldpbench_plugins.oracles.adp import Adaptive
from ldpbench_plugins.oracles.blh import BLH
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.hcms import HCMS
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH, olh_constants
from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.oracles.ss import SubsetSelection
from ldpbench_plugins.oracles.sue import SUE
from ldpbench_plugins.oracles.the import THE

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


@pytest.mark.parametrize("cls", [GRR, OUE, OLH, HR])
def test_perturb_rejects_values_outside_the_domain(cls):
    oracle = cls(d=4, epsilon=1.0)
    rng = np.random.default_rng(0)
    for bad in (np.array([0, 4]), np.array([-1]), np.array([0.5])):
        with pytest.raises(ValueError):
            oracle.perturb(bad, rng)
    with pytest.raises(ValueError):
        oracle.sample_support_counts(np.array([1, 2, 3]), rng)


DOMAINS = (2, 3, 5, 8)


BUDGETS = (0.1, 1.0, 4.0)


@pytest.mark.parametrize("cls", [GRR, OUE, HR])
@pytest.mark.parametrize("d", DOMAINS)
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_exact_tables(cls, d, eps):
    oracle = cls(d=d, epsilon=eps)
    P, S = oracle.output_table()
    expected_rows = {GRR: d, OUE: 2**d, HR: oracle.size if cls is HR else 0}[cls]
    assert P.shape == S.shape == (expected_rows, d)
    assert_ldp_table(P, eps)
    assert_support_constants(oracle, P, S)


@pytest.mark.parametrize("cls", [GRR, HR])
@pytest.mark.parametrize("eps", (0.5, 3.0))
def test_channels_equal_the_exact_tables(cls, eps):
    oracle = cls(d=5, epsilon=eps)
    P, _ = oracle.output_table()
    channel = oracle.channel()
    np.testing.assert_allclose(channel.dense(), P, atol=1e-15)
    rng = np.random.default_rng(3)
    theta, w = rng.random((5, 2)), rng.random((channel.n_reports, 2))
    np.testing.assert_allclose(channel.forward(theta), P @ theta, atol=1e-14)
    np.testing.assert_allclose(channel.backward(w), P.T @ w, atol=1e-14)


@pytest.mark.parametrize("cls", [GRR, OUE, OLH, HR])
def test_output_rows_match_the_table_supports(cls):
    """The report -> table row hook agrees with support_counts on the same reports."""
    rng = np.random.default_rng(5)
    oracle = cls(d=4, epsilon=1.0)
    _, S = oracle.output_table()
    values = rng.integers(0, 4, 500)
    reports = oracle.perturb(values, rng)
    rows = oracle.output_rows(reports)
    np.testing.assert_array_equal(S[rows].sum(axis=0), oracle.support_counts(reports))
    if cls is OLH:
        _, S_m = oracle.output_table(merged=True)
        np.testing.assert_array_equal(S_m[oracle.output_rows(reports, merged=True)], S[rows])


NEW = {"ss": SubsetSelection, "sue": SUE, "blh": BLH, "adp": Adaptive}


EPSILONS = (0.5, 1.0, 4.0)


def table_moments(P: np.ndarray, S: np.ndarray, counts: np.ndarray) -> tuple[float, float, np.ndarray]:
    """p*, q* and Var(c_w) read off the exact table: a user holding v supports w w.p.
    ``s[w, v] = sum_y P[y, v] S[y, w]``; users are independent, so ``Var c_w = sum_v n_v s(1 - s)``."""
    s = S.T.astype(float) @ P  # (w, v)
    d = s.shape[0]
    diag, off = np.diag(s), s[~np.eye(d, dtype=bool)]
    assert np.ptp(diag) < 1e-12 and np.ptp(off) < 1e-12, "support probabilities must not depend on the items"
    return float(diag[0]), float(off[0]), (s * (1 - s)) @ counts


@pytest.mark.parametrize("name", sorted(NEW))
@pytest.mark.parametrize("d", range(2, 9))
def test_constants_and_variance_match_the_exact_table(name, d):
    rng = np.random.default_rng(d)
    counts = rng.integers(0, 50, size=d) + 1
    n = int(counts.sum())
    for eps in EPSILONS:
        oracle = NEW[name](d=d, epsilon=eps)
        P, S = oracle.output_table()
        np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-12)
        p, q, var_c = table_moments(P, S, counts)
        assert oracle.p_star == pytest.approx(p, rel=1e-12, abs=1e-15)
        assert oracle.q_star == pytest.approx(q, rel=1e-12, abs=1e-15)
        want = var_c / (n * (p - q)) ** 2
        np.testing.assert_allclose(oracle.variance(n, counts / n), want, rtol=1e-10)
        assert oracle.noise_variance(n) == pytest.approx(q * (1 - q) / (n * (p - q) ** 2), rel=1e-12)


@pytest.mark.parametrize("d", range(2, 9))
def test_the_closed_forms_of_the_papers(d):
    for eps in EPSILONS:
        e = math.exp(eps)
        ss = SubsetSelection(d=d, epsilon=eps)
        k = ss.subset_size
        assert k == min(d - 1, max(1, round(d / (e + 1))))
        p = k * e / (k * e + d - k)
        assert ss.p_star == pytest.approx(p, rel=1e-12)
        assert ss.q_star == pytest.approx((p * (k - 1) + (1 - p) * k) / (d - 1), rel=1e-12)
        # [W20] §III-C writes q* in one fraction
        assert ss.q_star == pytest.approx((k * e * (k - 1) + (d - k) * k) / ((k * e + d - k) * (d - 1)), rel=1e-12)
        sue = SUE(d=d, epsilon=eps)
        h = math.exp(eps / 2)
        assert (sue.p_star, sue.q_star) == pytest.approx((h / (h + 1), 1 / (h + 1)), rel=1e-12)
        blh = BLH(d=d, epsilon=eps)
        assert (blh.p_star, blh.q_star) == pytest.approx((e / (e + 1), 0.5), rel=1e-12)


def test_ss_with_k_1_is_grr_and_blh_is_olh_with_two_buckets():
    for eps in EPSILONS:
        ss, grr = SubsetSelection(d=7, epsilon=eps, k=1), GRR(d=7, epsilon=eps)
        assert (ss.p_star, ss.q_star) == pytest.approx((grr.p_star, grr.q_star), rel=1e-12)
        np.testing.assert_allclose(ss.output_table()[0], grr.output_table()[0], rtol=1e-12)
        blh, olh = BLH(d=6, epsilon=eps), OLH(d=6, epsilon=eps, g=2)
        assert blh.buckets == olh.buckets == 2 and blh.get_params() == {}
        np.testing.assert_array_equal(blh.output_table()[0], olh.output_table()[0])
        values = np.arange(300) % 6
        a = blh.perturb(values, np.random.default_rng(1))
        b = olh.perturb(values, np.random.default_rng(1))
        assert np.array_equal(a.seeds, b.seeds) and np.array_equal(a.y, b.y)


def test_every_new_oracle_is_registered():

    plugins = builtin_plugins()
    for name, cls in NEW.items():
        assert plugins.get("oracle", name).cls is cls


TABLED = [
    ("the", THE, {}),
    ("the-theta", THE, {"theta": 0.7}),
    ("cms", CMS, {"m": 4}),
    ("cms-large-m", CMS, {"m": 1024}),
    ("hcms", HCMS, {"m": 2}),
    ("hcms-large-m", HCMS, {"m": 1024}),
    ("cms-apple", CMS, {"m": 4, "k": 3, "estimator": "apple"}),
    ("hcms-apple", HCMS, {"m": 8, "k": 3, "estimator": "apple"}),
]


@pytest.mark.parametrize("label, cls, params", TABLED, ids=[t[0] for t in TABLED])
def test_constants_variance_and_mean_from_the_exact_table(label, cls, params):
    """From the table, M[w, v] = P(w in Support | v); a report's support indicators are Bernoulli
    M[w, v_u], independent over users, so Var(f_w) = sum_v f_v M (1 - M) / (n (p* - q*)^2) and
    E[f_w] = (sum_v f_v M[w, v] - q*)/(p* - q*), exactly (1e-10)."""
    rng = np.random.default_rng(3)
    n = 1000
    for d in range(2, 9):
        for eps in (0.5, 1.0, 4.0):
            o = cls(d=d, epsilon=eps, **params)
            assert o.tags().output_table
            P, S = o.output_table()
            np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-12)
            M = S.T.astype(float) @ P
            p, q = o.p_star, o.q_star
            f = rng.dirichlet(np.ones(d))
            if not o.get_params().get("estimator") == "apple":
                np.testing.assert_allclose(np.diag(M), p, rtol=0, atol=1e-12)
                np.testing.assert_allclose(M[~np.eye(d, dtype=bool)], q, rtol=0, atol=1e-12)
            mean = M @ f
            square = (M**2) @ f
            np.testing.assert_allclose(o.variance(n, f), (mean - square) / (n * (p - q) ** 2), rtol=1e-10)
            if isinstance(o, CountMeanSketch):
                np.testing.assert_allclose(o.expected_estimate(f), (mean - q) / (p - q), rtol=1e-10, atol=1e-12)
