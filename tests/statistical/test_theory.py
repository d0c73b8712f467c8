"""``theory`` beside the measured MSE: the oracle's own variance formula, and a wrong oracle flagged."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
from support import builtin_plugins

import ldpbench
from ldpbench.leaderboard.theory import far_from_theory, theory_warnings


def test_theory_within_10_percent_of_measured_mse_for_every_builtin_oracle_in_the_quickstart(tmp_path):
    spec = Path(__file__).resolve().parents[2] / "specs" / "quickstart.yaml"
    lb = ldpbench.run(spec, tmp_path / "qs", workers=1).leaderboard
    base = lb.filter(lb["pipeline"] == "base")
    assert sorted(set(base["oracle"].to_list())) == ["grr", "hr", "olh", "oue"]
    for r in base.iter_rows(named=True):
        assert r["mean"] / r["theory"] == pytest.approx(1.0, abs=0.10), r
    # post-processed rows are biased: no theory for them
    assert all(math.isnan(t) for t in lb.filter(lb["pipeline"] != "base")["theory"].to_list())


def test_theory_under_personalized_budgets_and_sampling(tmp_path):
    spec = {
        "name": "mix",
        "seed": 4,
        "repeats": 200,
        "datasets": [{"zipf": {"d": 64, "n": 20000, "s": 1.1}}],
        "users": [{"epsilon": 0.5, "count": 3000}, {"epsilon": 2, "count": 1000}, {"epsilon": "inf", "count": 100}],
        "oracles": ["grr", "oue", APPLE],  # Apple's CMS: biases add with the group weights
        "pipelines": ["base"],
        "metrics": [{"mse": {"reduction": "sum"}}],
    }
    lb = ldpbench.run(spec, tmp_path / "mix", workers=1).leaderboard
    for r in lb.iter_rows(named=True):
        assert r["mean"] / r["theory"] == pytest.approx(1.0, abs=0.10), r


APPLE = {"cms": {"estimator": "apple", "m": 16, "k": 4}}


def test_a_declared_bias_enters_theory(tmp_path):
    # Apple's CMS is biased given its fixed hash family (it declares unbiased=False): its MSE is
    # variance + bias^2, and theory must say so instead of flagging the rows "far from theory".
    spec = {
        "name": "apple",
        "seed": 11,
        "repeats": 200,
        "simulation": "aggregate",
        "datasets": [{"zipf": {"d": 64, "n": 20000, "s": 1.1}}],
        "epsilons": [1, 4],
        "oracles": [APPLE],
        "pipelines": ["base"],
        "metrics": ["mse"],
    }
    out = ldpbench.run(spec, tmp_path / "apple", workers=1)
    assert theory_warnings(out.leaderboard) == []

    plugins = builtin_plugins()
    f = plugins.create("dataset", "zipf", {"d": 64, "n": 20000, "s": 1.1}).load(None).frequencies
    for r in out.leaderboard.iter_rows(named=True):
        assert r["mean"] / r["theory"] == pytest.approx(1.0, abs=0.10), r
        assert abs(r["mean"] - r["theory"]) < 5.5 * r["stderr"], r
        # the variance alone is far below: the bias is what the old theory left out
        variance_only = plugins.create("oracle", "cms", APPLE["cms"], d=64, epsilon=r["epsilon"]).variance(20000, f)
        assert r["mean"] / float(variance_only.mean()) > 1.25, r


WRONG_ORACLE = textwrap.dedent('''
    from ldpbench import hookimpl
    from ldpbench_plugins.oracles.oue import OUE


    class OverConfident(OUE):
        """OUE whose variance formula claims a quarter of the true variance."""

        name = "overconfident"

        def variance(self, n, f):
            return super().variance(n, f) / 4


    @hookimpl
    def ldpbench_register_oracles(registry):
        registry.register(OverConfident)
''')


def test_a_wrong_variance_formula_is_flagged_in_the_run_summary(tmp_path, run_cli):
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "wrong.py").write_text(WRONG_ORACLE)
    (tmp_path / "s.yaml").write_text(
        textwrap.dedent("""
        name: wrong
        seed: 1
        repeats: 10
        datasets: [{zipf: {d: 128, n: 50000}}]
        epsilons: [1]
        oracles: [oue, overconfident]
        pipelines: [base]
        metrics: [mse]
    """)
    )
    out = run_cli("run", "s.yaml", "--plugins-dir", "plugs", "--out", "r", "--workers", "1")
    assert out.returncode == 0, out.stderr
    assert "1 rows far from the oracle's theoretical error" in out.stderr
    assert "overconfident · base · mse: measured" in out.stderr and "oue · base" not in out.stderr


def test_far_needs_both_a_large_ratio_and_more_than_the_noise():
    assert far_from_theory(2.0, 0.01, 1.0)
    assert not far_from_theory(1.1, 0.01, 1.0)  # close
    assert not far_from_theory(2.0, 1.0, 1.0)  # far but within noise
    assert not far_from_theory(2.0, 0.01, math.nan)
