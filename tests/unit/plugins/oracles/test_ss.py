"""SS, SUE, BLH and ADP: p*, q* and the variance formula against the exact output table (d = 2..8),
the subset samplers, parameters, ADP's choice, and the labelling of rows that come from an
oracle's approximate aggregate path."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as st

import ldpbench
from ldpbench.engine.simulate import approximate_aggregate_note, simulate
from ldpbench.errors import ParamError
from ldpbench_plugins.oracles.adp import Adaptive, prefers_grr
from ldpbench_plugins.oracles.blh import BLH
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.oracles.ss import SubsetSelection, default_subset_size, uniform_subsets
from ldpbench_plugins.oracles.sue import SUE

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


def test_sue_and_oue_differ_only_in_their_bit_probabilities():
    for eps in EPSILONS:
        sue, oue = SUE(d=5, epsilon=eps), OUE(d=5, epsilon=eps)
        assert sue.p_star + sue.q_star == pytest.approx(1.0)
        assert oue.p_star == 0.5 and type(sue).perturb is type(oue).perturb
        # OUE's approximate variance is the smaller ([W17] §4.3)
        assert oue.noise_variance(1000) < sue.noise_variance(1000)
    assert SUE(d=5, epsilon=math.inf).p_star == 1.0 and SUE(d=5, epsilon=math.inf).q_star == 0.0


@pytest.mark.parametrize(("population", "k"), [(6, 2), (6, 5), (12, 10), (9, 1)])
def test_uniform_subsets_are_uniform(population, k):
    """Every k-subset equally likely (chi-square at 1e-6), on Floyd's path (k^2 <= 8 N) and on the
    random-key path (12, 10)."""
    draws = 60_000
    chosen = uniform_subsets(draws, population, k, np.random.default_rng(5))
    assert chosen.shape == (draws, k)
    assert np.all(np.sort(chosen, axis=1)[:, 1:] != np.sort(chosen, axis=1)[:, :-1])  # distinct
    masks = np.left_shift(1, chosen).sum(axis=1)
    _, observed = np.unique(masks, return_counts=True)
    assert observed.size == math.comb(population, k)
    assert st.chisquare(observed).pvalue > 1e-6


@pytest.mark.parametrize(("d", "k"), [(6, 2), (13, 11)])
def test_ss_reports_follow_the_output_table(d, k):
    """The per-user reports' frequencies against P(S | v) (chi-square at 1e-6), for one item, on
    both sampler paths."""
    oracle = SubsetSelection(d=d, epsilon=1.0, k=k)
    P, _ = oracle.output_table()
    v = 2
    reports = oracle.perturb(np.full(80_000, v), np.random.default_rng(3))
    observed = np.bincount(oracle.output_rows(reports), minlength=P.shape[0])
    assert st.chisquare(observed, P[:, v] * observed.sum()).pvalue > 1e-6


def test_ss_per_user_estimates_sum_to_one():
    """Every report holds exactly k items, and p* + (d - 1) q* = k, so the estimates sum to 1."""
    oracle = SubsetSelection(d=50, epsilon=1.0)
    counts = np.random.default_rng(0).integers(0, 40, size=50)
    est = simulate(oracle, counts, np.random.default_rng(1), "per-user")
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-9)
    assert oracle.p_star + 49 * oracle.q_star == pytest.approx(oracle.subset_size)


def test_ss_validates_k():
    assert SubsetSelection(d=10, epsilon=1.0, k=9).subset_size == 9
    for bad in (10, 11, -1):
        with pytest.raises(ParamError, match="k must be"):
            SubsetSelection(d=10, epsilon=1.0, k=bad)
    assert default_subset_size(2, 0.01) == 1 and default_subset_size(1000, 1.0) == round(1000 / (math.e + 1))
    assert SubsetSelection(d=20, epsilon=math.inf).p_star == 1.0


def test_ss_aggregate_estimates_sum_to_one_too():
    """The aggregate sampler keeps the joint law: every draw holds n k supports in all."""
    oracle = SubsetSelection(d=300, epsilon=1.0)
    counts = np.random.default_rng(0).integers(0, 40, size=300)
    rng = np.random.default_rng(2)
    for _ in range(5):
        c = oracle.sample_support_counts(counts, rng)
        assert c.sum() == counts.sum() * oracle.subset_size and c.min() >= 0
        est = simulate(oracle, counts, rng, "aggregate")
        assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-9) and est.warnings == ()


_APPROXIMATE_PLUGIN = """
from ldpbench import hookimpl
from ldpbench_plugins.oracles.oue import OUE


class GaussianishOUE(OUE):
    \"\"\"OUE declaring its aggregate path approximate (a test double).\"\"\"

    name = "approx-oue"
    exact_aggregate = False

    def tags(self):
        import dataclasses
        return dataclasses.replace(super().tags(), default=False)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(GaussianishOUE)
"""


def test_rows_of_an_approximate_aggregate_path_are_labelled(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "approx.py").write_text(_APPROXIMATE_PLUGIN)
    outcome = ldpbench.run(
        {
            "name": "approx",
            "seed": 3,
            "repeats": 1,
            "simulation": "aggregate",
            "datasets": [{"zipf": {"d": 8, "n": 2000}}],
            "epsilons": [1],
            "oracles": ["approx-oue", "oue"],
            "pipelines": ["base", "norm-sub"],
            "metrics": ["mse"],
        },
        out=tmp_path / "out",
        plugins_dirs=[tmp_path / "plugins"],
    )
    lines = (outcome.out_dir / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]  # after the schema header
    assert {r["pipeline"] for r in rows if r["oracle"] == "approx-oue"} == {"base", "norm-sub"}
    for r in rows:
        if r["oracle"] == "approx-oue":
            assert r["notes"] == approximate_aggregate_note("approx-oue")
        else:
            assert r["notes"] is None


def test_only_the_aggregate_path_of_an_approximate_oracle_is_labelled():
    class Approximate(SUE):
        exact_aggregate = False

    oracle, counts = Approximate(d=8, epsilon=1.0), np.full(8, 50)
    agg = simulate(oracle, counts, np.random.default_rng(0), "aggregate")
    per_user = simulate(oracle, counts, np.random.default_rng(0), "per-user")
    assert agg.warnings == (approximate_aggregate_note("sue"),) and per_user.warnings == ()
    assert simulate(SUE(d=8, epsilon=1.0), counts, np.random.default_rng(0), "aggregate").warnings == ()


def test_adp_follows_the_variance_rule():
    for eps in (0.5, 1.0, 2.0, 4.0, math.inf):
        for d in range(2, 300):
            assert prefers_grr(d, eps) == (d < 3 * math.exp(eps) + 2)
            chosen = Adaptive(d=d, epsilon=eps)
            assert chosen.chosen == ("grr" if prefers_grr(d, eps) else "oue")
    # the rule compares the two approximate variances ([W17] §4)
    for d, eps in ((10, 1.0), (11, 1.0), (200, 4.0)):
        e = math.exp(eps)
        grr_var, oue_var = (e + d - 2) / (e - 1) ** 2, 4 * e / (e - 1) ** 2
        assert Adaptive(d=d, epsilon=eps).chosen == ("grr" if grr_var < oue_var else "oue")


def test_adp_is_its_delegate():
    for d, eps, name in ((8, 1.0, "grr"), (8, 0.5, "oue")):
        adp = Adaptive(d=d, epsilon=eps)
        ref = {"grr": GRR, "oue": OUE}[name](d=d, epsilon=eps)
        assert adp.chosen == name and (adp.p_star, adp.q_star) == (ref.p_star, ref.q_star)
        np.testing.assert_array_equal(adp.output_table()[0], ref.output_table()[0])
        counts = np.arange(d) * 10 + 5
        a = simulate(adp, counts, np.random.default_rng(4), "aggregate")
        b = simulate(ref, counts, np.random.default_rng(4), "aggregate")
        np.testing.assert_array_equal(a.frequencies, b.frequencies)
        assert a.mechanism == "adp" and a.info["diagnostics"] == {"chose": name}
        assert not adp.tags().finite_output and not adp.tags().default


def test_the_choice_reaches_the_rows(tmp_path):
    outcome = ldpbench.run(
        {
            "name": "adp-ss",
            "seed": 3,
            "repeats": 1,
            "datasets": [{"zipf": {"d": 8, "n": 2000}}],
            "epsilons": [0.5, 1],
            "oracles": ["adp", "ss"],
            "pipelines": ["base"],
            "metrics": ["mse"],
        },
        out=tmp_path,
    )
    lines = (outcome.out_dir / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]  # after the schema header
    by = {(r["oracle"], r["epsilon"]): r for r in rows}
    assert json.loads(by[("adp", 1.0)]["info"]) == {"chose": "grr"}
    assert json.loads(by[("adp", 0.5)]["info"]) == {"chose": "oue"}
    assert all(r["notes"] is None for r in rows) and outcome.failed_rows == 0


def test_every_new_oracle_is_registered():
    from ldpbench import build_plugins

    plugins = build_plugins()
    for name, cls in NEW.items():
        assert plugins.get("oracle", name).cls is cls
