"""LDPRecover (Sun et al., arXiv 2403.09351): the genuine-frequency estimator and the CI projection.

Exact checks on hand-built poisoned vectors, and one simulation (GRR, d = 16, n = 20,000 genuine
users, eta = 0.05, 150 repeats, fixed seed): the estimator's mean against its expectation under two
fake populations, within 5 sigma per item (sigma from the multinomial variance of the n + m reports).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import oue_estimate, postprocessor

from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate
from ldpbench_plugins.numerics.simplex import simplex_shift
from ldpbench_plugins.postprocessors.ldprecover import genuine_estimate, ldprecover, malicious_estimate, malicious_sum

RNG = np.random.default_rng(2403)
D, EPS = 16, 1.0
P = math.exp(EPS) / (math.exp(EPS) + D - 1)
Q = 1.0 / (math.exp(EPS) + D - 1)


def test_the_malicious_sum_is_one_for_every_pure_protocol():
    assert malicious_sum(50, 0.5, 0.2) == pytest.approx(1.0, abs=1e-12)
    # GRR: a report supports one item, p + (d - 1) q = 1, and (1 - d q)/(p - q) = 1
    assert malicious_sum(D, P, Q) == pytest.approx((1 - D * Q) / (P - Q), abs=1e-12)


@pytest.mark.parametrize("spread", ["positive", "all"])
def test_the_exact_mixture_is_undone(spread):
    """f~_Z = (f_X + eta f_Y)/(1 + eta), f_Y the learned spread of f~_Z, gives back f_X exactly."""
    p, q = 0.5, 1 / (math.e + 1)
    f_x = np.linspace(1.0, 2.0, 40)
    f_x /= f_x.sum()
    eta = 0.1
    f_y = np.full(40, 1 / 40)  # f_Z > 0 everywhere here: D_1 is every item, both spreads agree
    f_z = (f_x + eta * f_y) / (1 + eta)
    np.testing.assert_allclose(ldprecover(f_z, eta, p, q, spread), f_x, rtol=0, atol=1e-14)


def test_the_spread_goes_on_the_positive_items_only():
    f = np.array([0.5, 0.3, -0.1, 0.3])
    np.testing.assert_allclose(malicious_estimate(f, 0.5, 0.2, "positive"), [1 / 3, 1 / 3, 0, 1 / 3])
    np.testing.assert_allclose(malicious_estimate(f, 0.5, 0.2, "all"), np.full(4, 0.25))


@pytest.mark.parametrize("spread", ["positive", "all"])
def test_without_attack_details_it_is_norm_sub_of_the_rescaled_vector(spread):
    """The projection absorbs a shift common to the items it keeps: when D_0 ends at 0,
    LDPRecover = Norm-Sub((1 + eta) f~_Z) (module docstring)."""
    for _ in range(50):
        f = RNG.normal(1 / 30, 0.05, 30)
        f[:5] += 0.1  # positives sum past 1
        rescaled = 1.2 * f
        expected = np.maximum(rescaled - simplex_shift(rescaled), 0.0)
        np.testing.assert_allclose(ldprecover(f, 0.2, 0.5, 0.2, spread), expected, rtol=0, atol=1e-12)


def test_eta_zero_is_norm_sub():
    f = RNG.normal(1 / 30, 0.05, 30)
    est = oue_estimate(f)
    rec = postprocessor("ldprecover", eta=0.0).apply(est, RNG).frequencies
    np.testing.assert_allclose(rec, postprocessor("norm-sub").apply(est, RNG).frequencies, rtol=0, atol=1e-15)


def test_the_output_is_consistent():
    est = oue_estimate(RNG.normal(1 / 30, 0.05, 30))
    out = postprocessor("ldprecover", eta=0.2).apply(est, RNG).frequencies
    assert out.min() >= 0 and abs(out.sum() - 1) < 1e-12


def test_it_needs_p_star():
    est = Estimate(np.full(4, 0.25), 100, 1.0, "she")
    with pytest.raises(NotApplicable, match="p\\* and q\\*"):
        postprocessor("ldprecover").apply(est, RNG)


def _grr_histogram(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """GRR reports of users holding ``counts`` (one multinomial per item, never per user)."""
    h = np.zeros(D)
    for v, c in enumerate(counts):
        kept = rng.binomial(c, P)
        h[v] += kept
        h[np.arange(D) != v] += rng.multinomial(c - kept, np.full(D - 1, 1 / (D - 1)))
    return h


@pytest.mark.parametrize("attack", ["adaptive-uniform", "mga-krr"])
def test_the_estimator_mean_matches_its_expectation(attack):
    """(``spread: all``.) Adaptive fakes (honest GRR on uniform items: f_Y = 1/d): the estimator is
    unbiased for the genuine frequencies. MGA on kRR (each fake reports a target, two targets): its
    mean is f_X + eta (f~_Y - 1/d), f~_Y(v) = (1_T(v)/r - q)/(p - q): LDPRecover, knowing nothing of
    the targets, does not remove their gain (Sun et al. add attack details as extra constraints)."""
    rng = np.random.default_rng(7 if attack == "mga-krr" else 8)
    n, eta, reps = 20_000, 0.05, 150
    m = int(eta * n)
    f_x = np.arange(D, 0, -1.0) / np.arange(D, 0, -1.0).sum()
    targets = np.array([13, 15])
    diffs = np.empty((reps, D))
    for r in range(reps):
        genuine = rng.multinomial(n, f_x)
        h = _grr_histogram(genuine, rng)
        if attack == "mga-krr":
            h[targets] += rng.multinomial(m, [0.5, 0.5])
        else:
            h += _grr_histogram(rng.multinomial(m, np.full(D, 1 / D)), rng)
        f_z = (h / (n + m) - Q) / (P - Q)
        diffs[r] = genuine_estimate(f_z, eta, P, Q, "all") - genuine / n
    expected = np.zeros(D)
    if attack == "mga-krr":
        f_y = (np.isin(np.arange(D), targets) / targets.size - Q) / (P - Q)
        expected = eta * (f_y - 1 / D)
    y = Q + (P - Q) * f_x
    sigma = (1 + eta) * np.sqrt(y * (1 - y) / ((n + m) * (P - Q) ** 2) + f_x * (1 - f_x) / n)
    z = np.abs(diffs.mean(axis=0) - expected) / (sigma / math.sqrt(reps))
    assert z.max() < 5.0, z  # 5 sigma per item, 16 items: a correct estimator fails with p < 1e-5
    if attack == "mga-krr":  # the planted bias is far outside the noise: a wrong eta or sign fails
        assert np.abs(expected).max() / (sigma.max() / math.sqrt(reps)) > 20


def test_through_real_attacked_cells_ldprecover_and_cao_norm_cut_the_gain():
    """MGA on GRR and OUE (d = 32, n = 20,000, eps = 1, beta = 0.05, 5 targets; one fixed-seed
    repeat, run through the engine). The gain's noise is about 0.05 (5 targets, per-item sd 0.023
    for GRR), and every pipeline post-processes the same poisoned estimate, so the paired
    differences below are far outside it: measured, LDPRecover cuts the gain by 0.31 (GRR) and
    0.29 (OUE), Cao's normalization to 47 % of it; LDPRecover stays within 0.02 of Norm-Sub (it is
    Norm-Sub of the vector rescaled by 1 + eta, module docstring)."""
    from support import defense_values

    v = defense_values()
    for oracle in ("grr", "oue"):
        base = v[(f"{oracle}@mga", "base", "frequency-gain")]
        recovered = v[(f"{oracle}@mga", "ldprecover(eta=0.0526316)", "frequency-gain")]
        assert base - recovered > 0.15
        assert abs(recovered - v[(f"{oracle}@mga", "norm-sub", "frequency-gain")]) < 0.02
        assert v[(f"{oracle}@mga", "cao-norm", "frequency-gain")] < 0.6 * base
        assert abs(v[(f"{oracle}@none", "ldprecover(eta=0.0526316)", "frequency-gain")]) < 0.25  # 5 sigma
