"""SMP (plugins/protocols/smp.py): one sampled attribute per user at the whole budget; its
estimates against the formula, its whole report's exact epsilon."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom
from support_multidim import SIZES, check_moments, moments, population

from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.protocols._multidim import max_log_ratio
from ldpbench_plugins.protocols.smp import SMP

ORACLES = {"grr": GRR, "oue": OUE}


def smp_variance(oracle, d: int, a: int, eps: float, n: int, f: np.ndarray) -> np.ndarray:
    """``E over n_j ~ Bin(n, 1/a)`` of the oracle's variance over the ``n_j`` users who sampled the
    attribute, plus the variance of their own frequency about ``f`` (a sample of ``n_j`` of the
    ``n`` users without replacement: ``f (1 - f) (n - n_j) / (n_j (n - 1))``)."""
    k = np.arange(1, n + 1)
    w = binom.pmf(k, n, 1 / a)
    fo = ORACLES[oracle](d, eps)
    per = np.array([fo.variance(int(m), f) for m in k[w > 1e-12]])
    sampling = f * (1 - f) * (n - k[w > 1e-12])[:, None] / (k[w > 1e-12][:, None] * (n - 1))
    return (w[w > 1e-12][:, None] * (per + sampling)).sum(axis=0) / w[w > 1e-12].sum()


@pytest.mark.parametrize("oracle", ["grr", "oue"])
@pytest.mark.parametrize(("simulation", "repeats", "tol"), [("aggregate", 400, 0.3), ("per-user", 120, 0.55)])
def test_each_attribute_is_unbiased_with_the_variance_of_its_sampled_users(oracle, simulation, repeats, tol):
    # summed sample variance: sd <= 0.071 (R = 400), 0.13 (R = 120); tolerances > 4 sigma. Dividing by
    # n instead of n_j (a biased estimate) or dropping the sampling term moves the mean or the variance
    pop, eps = population(), 1.0
    found = moments(SMP(oracle=oracle), pop, eps, repeats, simulation)
    check_moments(pop, found, lambda j, f: smp_variance(oracle, SIZES[j], 2, eps, pop.n, f), repeats, tol)


def test_each_attribute_is_estimated_from_the_users_who_sampled_it():
    out = SMP(oracle="oue").run(population(1000), 1.0, np.random.default_rng(0))
    assert sorted(out) == ["x", "y"] and sum(e.n for e in out.values()) == 1000
    assert all(e.epsilon == 1.0 and e.mechanism == "smp" for e in out.values())


@pytest.mark.parametrize("oracle", ["grr", "oue"])
def test_the_whole_report_attribute_and_value_is_exactly_epsilon_ldp(oracle):
    P = SMP(oracle=oracle).report_table((2, 3), 1.5)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert P.shape[1] == (2 + 3 if oracle == "grr" else 4 + 8)  # (attribute, oracle report) pairs
    assert max_log_ratio(P) == pytest.approx(1.5)
