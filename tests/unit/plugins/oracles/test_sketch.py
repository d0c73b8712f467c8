"""SHE, THE, CMS and HCMS: p*, q*, the variance and Apple's bias read off the exact output tables
(d = 2..8), Apple's own sketch arithmetic, the optimal THE threshold, and the continuous audit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpbench import build_plugins
from ldpbench.audit import empirical_audit
from ldpbench.boundary.values import PluginOutputError
from ldpbench.engine.simulate import simulate
from ldpbench.errors import NotApplicable
from ldpbench_plugins.oracles import _fwht
from ldpbench_plugins.oracles._sketch import CountMeanSketch
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS
from ldpbench_plugins.oracles.she import SHE
from ldpbench_plugins.oracles.the import THE, noise_factor, optimal_theta

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


def test_the_threshold_minimizes_the_variance():
    for eps in (0.5, 1.0, 2.0, 4.0, 8.0):
        theta = optimal_theta(eps)
        assert 0.5 <= theta <= 1.0
        grid = np.linspace(0.5, 1.0, 2001)
        best = min(noise_factor(eps, t) for t in grid)
        assert noise_factor(eps, theta) <= best * (1 + 1e-9)
    assert THE(d=4, epsilon=1.0).threshold == optimal_theta(1.0)
    assert THE(d=4, epsilon=1.0, theta=0.8).threshold == 0.8


def test_the_constants_are_laplace_tails():
    eps, theta = 1.0, 0.8
    o = THE(d=4, epsilon=eps, theta=theta)
    b = 2 / eps
    assert o.p_star == pytest.approx(1 - 0.5 * math.exp((theta - 1) / b), rel=1e-15)
    assert o.q_star == pytest.approx(0.5 * math.exp(-theta / b), rel=1e-15)


def test_cms_null_law_by_brute_force():
    """P0(z) of the merged CMS table, against enumerating every function h: D -> [m] and bit vector."""
    for m, d in ((2, 3), (4, 3), (2, 4)):
        o = CMS(d=d, epsilon=1.0, m=m)
        q = o._q0
        brute = {}
        for h in itertools.product(range(m), repeat=d):
            for bits in itertools.product((0, 1), repeat=m):
                weight = m**-d * math.prod(q if b else 1 - q for b in bits)
                z = tuple(bits[h[w]] for w in range(d))
                brute[z] = brute.get(z, 0.0) + weight
        for z, want in brute.items():
            assert o._null_probability(sum(z), d - sum(z)) == pytest.approx(want, rel=1e-12)


def _apple_cms(o: CMS, reports, n: int) -> np.ndarray:
    """Apple's server ([Apple17], server-side CMS): M[j] += k (c/2 x + 1/2) with x = +-1 bits, then
    f(w) = m/(m-1) (1/k sum_j M[j, h_j(w)] - n/m); returned as a fraction."""
    k, m = o.functions, o.buckets
    c = (math.exp(o.epsilon / 2) + 1) / (math.exp(o.epsilon / 2) - 1)
    x = np.where(reports.votes, 1.0, -1.0)
    M = np.zeros((k, m))
    np.add.at(M, reports.function, k * (c / 2 * x + 0.5))
    counts = M[np.arange(k)[:, None], o.table].sum(axis=0) / k
    return m / (m - 1) * (counts - n / m) / n


def _apple_hcms(o: HCMS, reports, n: int) -> np.ndarray:
    """Apple's HCMS server ([Apple17], server-side HCMS): M[j, l] += k c y, M <- M H^T, same estimate."""
    k, m = o.functions, o.buckets
    c = (math.exp(o.epsilon) + 1) / (math.exp(o.epsilon) - 1)
    y = np.where(reports.votes, 1.0, -1.0)
    M = np.zeros((k, m))
    np.add.at(M, (reports.function, reports.coefficient), k * c * y)
    M = M @ _fwht.sylvester(m).T
    counts = M[np.arange(k)[:, None], o.table].sum(axis=0) / k
    return m / (m - 1) * (counts - n / m) / n


@pytest.mark.parametrize("cls, apple", [(CMS, _apple_cms), (HCMS, _apple_hcms)], ids=["cms", "hcms"])
def test_apples_estimator_is_the_pure_protocol_estimate(cls, apple):
    rng = np.random.default_rng(5)
    o = cls(d=40, epsilon=1.5, m=16, k=5, estimator="apple")
    values = rng.integers(0, 40, size=3000)
    reports = o.perturb(values, rng)
    ours = o.estimate(o.support_counts(reports), values.size).frequencies
    np.testing.assert_allclose(ours, apple(o, reports, values.size), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", [CMS, HCMS], ids=["cms", "hcms"])
def test_sketch_support_counts_match_the_support_matrix(cls):
    """Apple's sketch path and the per-user-hash path count what the per-user supports say."""
    rng = np.random.default_rng(6)
    for params in ({"m": 16}, {"m": 16, "k": 4, "estimator": "apple"}):
        o = cls(d=30, epsilon=1.0, **params)
        reports = o.perturb(rng.integers(0, 30, size=500), rng)
        np.testing.assert_array_equal(o.support_counts(reports), o.support_matrix(reports).sum(axis=0))


def test_sketch_parameters_are_checked():
    from ldpbench.errors import ParamError

    with pytest.raises(ParamError, match="power of two"):
        CMS(d=4, epsilon=1.0, m=12)
    with pytest.raises(ParamError, match="finite epsilon"):
        HCMS(d=4, epsilon=math.inf)


# ----------------------------------------------------------------------------------------------
# SHE: real-valued sums through the harness, and the continuous audit
# ----------------------------------------------------------------------------------------------


def test_she_estimate_is_the_mean_report_and_carries_no_pure_constants():
    rng = np.random.default_rng(7)
    o = SHE(d=5, epsilon=1.0)
    counts = np.array([3, 0, 1, 0, 2])
    est = simulate(o, counts, rng, "per-user")
    assert est.p_star is None and est.q_star is None
    np.testing.assert_allclose(est.frequencies, np.asarray(est.support_counts) / 6)
    np.testing.assert_allclose(est.variance, 8 / (1.0**2 * 6))
    assert o.tags().real_valued_counts and o.tags().report_density and not o.tags().support_matrix


def test_mle_apx_declines_she_as_not_applicable():
    plugins = build_plugins()
    est = simulate(SHE(d=5, epsilon=1.0), np.array([3, 0, 1, 0, 2]), np.random.default_rng(0), "aggregate")
    with pytest.raises(NotApplicable, match="pure oracle"):
        plugins.create("postprocessor", "mle-apx").apply(est, np.random.default_rng(0))


class _NaNSums(SHE):
    name = "she-nan"

    def sample_support_counts(self, true_counts, rng):
        out = super().sample_support_counts(true_counts, rng)
        out[1] = np.nan
        return out


def test_a_nan_sum_is_a_plugin_error_not_a_number():
    with pytest.raises(PluginOutputError, match="non-finite"):
        simulate(_NaNSums(d=4, epsilon=1.0), np.array([1, 2, 3, 4]), np.random.default_rng(0), "aggregate")


class _QuietReports(SHE):
    """Leaks: reports carry half the noise the declared density says."""

    name = "she-quiet"

    def perturb(self, values, rng):
        return super().perturb(values, rng) * 0.0 + self._half(values, rng)

    def _half(self, values, rng):
        from ldpbench_plugins.oracles import _histogram

        return _histogram.noisy_one_hot(np.asarray(values), self.d, self.scale / 2, rng)


class _ThinDensity(SHE):
    """Leaks on paper: the declared density's scale is half what eps-LDP needs."""

    name = "she-thin"

    def report_log_likelihood(self, reports):
        return 2 * super().report_log_likelihood(reports)


@pytest.mark.parametrize("cls", [SHE, _QuietReports, _ThinDensity], ids=["she", "quiet-reports", "thin-density"])
def test_continuous_audit(cls):
    audit = empirical_audit(lambda eps: cls(d=8, epsilon=eps), (1.0, 4.0), trials=10_000, seed=1)
    assert audit.available
    if cls is SHE:
        assert not audit.leak
        assert all(b.declared_loss == pytest.approx(b.epsilon, rel=1e-9) for b in audit.budgets)
    elif cls is _QuietReports:
        assert any(b.eps_lb > b.epsilon for b in audit.budgets), [b.eps_lb for b in audit.budgets]
    else:
        assert all(b.density_leak for b in audit.budgets)


@pytest.mark.slow
@pytest.mark.parametrize("core", [1e-13, 0.3], ids=["default-core", "narrow-core"])
def test_cms_aggregate_has_the_exact_law_with_stray_users(core, monkeypatch):
    """The aggregate sampler's tail path (users whose K falls outside the core window) is exact:
    with a core of only the likeliest K values, most users stray and the support counts must still
    follow the law enumerated from the output table."""
    from ldpbench.testing import stats
    from ldpbench_plugins.oracles import cms as cms_module

    monkeypatch.setattr(cms_module, "_CORE_RELATIVE", core)
    counts = np.array([2, 1, 1])
    o = CMS(d=3, epsilon=1.0, m=8)
    P, S = o.output_table()
    per_item = [stats.categorical_law(S.astype(np.int64), P[:, v]) for v in range(3)]
    law = stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))
    rng = np.random.default_rng(11)
    draws = np.array([o.sample_support_counts(counts, rng) for _ in range(5000)])
    stats.exact_distribution_test(draws, law, label=f" of CMS aggregate counts, core {core}").check()


def test_validate_refuses_mle_apx_after_she_with_file_and_line(tmp_path, capsys):
    from ldpbench.cli import main

    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: she-mle\nseed: 1\nrepeats: 1\ndatasets:\n  - zipf: {d: 16, n: 1000, s: 1.1}\n"
        "epsilons: [1]\noracles: [she, the]\npipelines:\n  - base\n  - mle-apx\nmetrics: [mse]\n"
    )
    code = main(["validate", str(spec)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{spec}:10: post-processor 'mle-apx' needs a pure oracle's p* and q*, but oracle 'she'" in err
    assert "oracle 'the'" not in err


@pytest.mark.slow
def test_hcms_apple_splitting_sampler_has_the_exact_law(monkeypatch):
    """Apple's HCMS aggregate path through HR's splitting sampler (forced for a tiny population,
    which would otherwise have its reports drawn) against the law enumerated from the table."""
    from ldpbench.testing import stats
    from ldpbench_plugins.oracles import hcms as hcms_module

    monkeypatch.setattr(hcms_module, "_PER_USER_UP_TO", 0)
    counts = np.array([2, 1, 1])
    o = HCMS(d=3, epsilon=1.0, m=4, k=3, estimator="apple")
    P, S = o.output_table()
    per_item = [stats.categorical_law(S.astype(np.int64), P[:, v]) for v in range(3)]
    law = stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))
    rng = np.random.default_rng(12)
    draws = np.array([o.sample_support_counts(counts, rng) for _ in range(5000)])
    stats.exact_distribution_test(draws, law, label=" of Apple HCMS aggregate counts (splitting)").check()


def test_personalized_budgets_weight_she_groups_by_their_variance():
    """SHE carries no p*/q*: its groups are weighted by the (f-free) noise variance it declares."""
    from ldpbench.engine.groups import group_weights

    rng = np.random.default_rng(8)
    counts = np.array([30, 10, 5, 5])
    parts = [simulate(SHE(d=4, epsilon=eps), counts, rng, "aggregate") for eps in (0.5, 2.0)]
    w = group_weights(parts, 4)
    inverse = np.array([1 / parts[0].variance[0], 1 / parts[1].variance[0]])
    np.testing.assert_allclose(w, inverse / inverse.sum(), rtol=1e-12)
    assert w[1] / w[0] == pytest.approx(16.0)  # variance 8/(eps^2 n): four times eps, 16 times the weight


def test_audit_she_says_what_it_checked(capsys):
    """'ldpbench audit she' exits 0 having audited something: the declared density's worst loss per
    budget (exactly eps) and the likelihood-ratio attack, not 'nothing was audited'."""
    import json

    from ldpbench.cli import main

    assert main(["audit", "she", "--trials", "3000", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"].startswith("consistent")
    budgets = report["empirical"]["budgets"]
    assert [b["declared_loss"] for b in budgets] == pytest.approx([0.5, 1.0, 4.0], rel=1e-9)
    assert all(b["best"]["attack"] == "likelihood-ratio" for b in budgets)
    assert report["exact"]["available"] is False
    assert main(["audit", "she", "--trials", "3000"]) == 0
    out = capsys.readouterr().out
    assert "continuous reports: no output table (the exact audit does not apply)" in out


def test_laplace_noise_has_the_laplace_law():
    """The symmetrized-exponential sampler against scipy's Laplace CDF (KS, 200,000 draws), and
    both halves: exactly symmetric signs, exponential magnitudes."""
    from scipy import stats as st

    from ldpbench_plugins.oracles._histogram import laplace_noise

    x = laplace_noise((400, 500), 2.0, np.random.default_rng(9)).ravel()
    assert st.kstest(x, "laplace", args=(0, 2.0)).pvalue >= 1e-6
    assert abs((x > 0).mean() - 0.5) <= 5.5 * 0.5 / math.sqrt(x.size)
    assert st.kstest(np.abs(x), "expon", args=(0, 2.0)).pvalue >= 1e-6
