"""The count-mean sketches CMS and HCMS (plugins/oracles/_sketch.py): Apple's own sketch arithmetic
is the pure-protocol estimate, support counts match the support matrix, parameters are checked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench_plugins.oracles import _fwht
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS


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
