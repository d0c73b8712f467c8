"""The arithmetic of the [W17] write-up (scripts/wang2017_analysis.py): the paper's closed forms
against the oracles' own constants, the expected-MSE crossover against ``Oracle.variance``, and the
crossover interpolation on curves whose crossing is known exactly."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from support import ROOT

from ldpbench_plugins.oracles.olh import olh_constants

SCRIPT = ROOT / "scripts" / "wang2017_analysis.py"
_spec = importlib.util.spec_from_file_location("wang2017_analysis", SCRIPT)
w17 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(w17)

EPSILONS = (0.5, 1.0, 2.0, 3.5, 5.0)


def var_star(p: float, q: float) -> float:
    """n Var* of a pure protocol ([W17] Eq. 2 without the f_v term)."""
    return q * (1 - q) / (p - q) ** 2


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("name", ["grr", "oue", "hr"])
def test_closed_forms_equal_the_variance_of_the_oracles_constants(plugins, name, eps):
    d = 300
    oracle = plugins.create("oracle", name, {}, d=d, epsilon=eps)
    assert w17.PAPER_VAR[name](eps, d) == pytest.approx(var_star(oracle.p_star, oracle.q_star), rel=1e-12)
    assert w17.paper_mse(name, eps, d, 1000) == pytest.approx(oracle.noise_variance(1000), rel=1e-12)


@pytest.mark.parametrize("eps", EPSILONS)
def test_closed_forms_of_the_protocols_from_their_definitions(eps):
    e = math.exp(eps)
    # OLH at the real optimum g = e^eps + 1; BLH is g = 2 ([W17] §4.4)
    assert w17.PAPER_VAR["olh"](eps, 0) == pytest.approx(var_star(*olh_constants(eps, e + 1)), rel=1e-12)
    assert w17.PAPER_VAR["blh"](eps, 0) == pytest.approx(var_star(*olh_constants(eps, 2)), rel=1e-12)
    # SUE: every bit kept w.p. e^(eps/2) / (e^(eps/2) + 1) ([W17] §4.3)
    half = math.exp(eps / 2)
    assert w17.PAPER_VAR["sue"](eps, 0) == pytest.approx(var_star(half / (half + 1), 1 / (half + 1)), rel=1e-12)
    # SHE: Laplace noise of scale 2/eps on every entry, variance 2 (2/eps)^2
    assert w17.PAPER_VAR["she"](eps, 0) == pytest.approx(2 * (2 / eps) ** 2, rel=1e-12)
    # THE: p* = 1 - e^(eps (t-1)/2) / 2, q* = e^(-eps t/2) / 2, best t on a fine grid ([W17] §4.2)
    t = np.linspace(0.5, 1.0, 200_001)[1:-1]
    p, q = 1 - 0.5 * np.exp(eps * (t - 1) / 2), 0.5 * np.exp(-eps * t / 2)
    assert w17.PAPER_VAR["the"](eps, 0) == pytest.approx(np.min(q * (1 - q) / (p - q) ** 2), rel=1e-6)
    # the ordering [W17] Table 1 states: OUE = OLH below SUE, BLH, SHE and THE
    oue = w17.PAPER_VAR["oue"](eps, 0)
    assert w17.PAPER_VAR["olh"](eps, 0) == pytest.approx(oue, rel=1e-12)
    assert all(w17.PAPER_VAR[k](eps, 0) > oue for k in ("sue", "blh", "she", "the"))


def test_an_oracle_not_in_the_paper_has_no_closed_form():
    assert math.isnan(w17.paper_mse("ss", 1.0, 64, 1000))


@pytest.mark.parametrize("eps", EPSILONS)
def test_the_paper_crossover_is_where_grr_and_oue_var_star_meet(eps):
    d = w17.crossover_domain(eps)
    assert w17.PAPER_VAR["grr"](eps, d) == pytest.approx(w17.PAPER_VAR["oue"](eps, d), rel=1e-12)
    assert w17.crossover_epsilon(d) == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("d", [16, 64, 1024, 16384])
@pytest.mark.parametrize("eps", EPSILONS)
def test_mse_gap_is_the_oracles_exact_full_domain_variance_on_any_population(plugins, d, eps):
    grr = plugins.create("oracle", "grr", {}, d=d, epsilon=eps)
    oue = plugins.create("oracle", "oue", {}, d=d, epsilon=eps)
    for f in (np.full(d, 1 / d), np.arange(1, d + 1) ** -1.5 / np.sum(np.arange(1, d + 1) ** -1.5)):
        expected = np.mean(grr.variance(1, f)) - np.mean(oue.variance(1, f))
        assert w17.mse_gap(eps, d) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("eps", EPSILONS)
def test_the_expected_mse_crossover_is_a_root_and_lies_below_the_papers(eps):
    d = w17.mse_crossover_domain(eps)
    assert w17.mse_gap(eps, d) == pytest.approx(0, abs=1e-9)
    assert w17.mse_gap(eps, 0.9 * d) < 0 < w17.mse_gap(eps, 1.1 * d)
    assert d < w17.crossover_domain(eps)
    assert w17.mse_crossover_epsilon(d) == pytest.approx(eps, rel=1e-6)


def test_crossover_interpolation_is_exact_on_a_log_linear_ratio():
    x = np.array([64.0, 128, 256, 512])
    other = np.ones(4)
    grr = (x / 100.0) ** 0.8  # log ratio linear in log x, zero at x = 100
    assert w17.crossover(x, grr, other, grr_wins_low=True) == (pytest.approx(100.0, rel=1e-12), "")
    assert w17.sign_change(x, np.log(grr)) == pytest.approx(100.0, rel=1e-12)


def test_crossover_outside_the_grid_says_on_which_side():
    x = np.array([1.0, 2.0, 3.0])
    loses = np.array([2.0, 3.0, 4.0])  # GRR worse everywhere
    wins = np.array([0.5, 0.4, 0.3])
    assert w17.crossover(x, loses, np.ones(3), grr_wins_low=True)[1] == "below"  # d* below the grid
    assert w17.crossover(x, wins, np.ones(3), grr_wins_low=True)[1] == "above"
    assert w17.crossover(x, loses, np.ones(3), grr_wins_low=False)[1] == "above"  # eps* above the grid
    assert w17.crossover(x, wins, np.ones(3), grr_wins_low=False)[1] == "below"
    with pytest.raises(ValueError):
        w17.sign_change(np.array([2.0, 1.0]), np.array([1.0, -1.0]))


def test_bootstrap_interval_brackets_a_noise_free_crossing():
    x = np.array([64.0, 128, 256])
    grr = [np.full(5, (v / 100.0) ** 0.8) for v in x]
    other = [np.ones(5) for _ in x]
    low, high, missing = w17.bootstrap_crossover(x, grr, other, True, np.random.default_rng(0), draws=20)
    assert (low, high, missing) == (pytest.approx(100.0), pytest.approx(100.0), 0)
