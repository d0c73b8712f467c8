"""Every longitudinal protocol's per-round estimator against its formulas, on both simulation paths
(plugins/protocols/_longitudinal.py, l_memo.py, l_naive.py): unbiased, with the variance
``[f p*(1-p*) + (1-f) q*(1-q*)] / (n (p*-q*)^2)`` (the paper's Var* at f = 0; Arcolezi et al.,
EDBT 2023), and, for users who keep their value, the covariance between two rounds that the shared
permanent response gives (``Chain.round_covariance``: 0 for the naive protocol). The exact
aggregate path is thereby checked against the per-user path: both must meet the same moments.

Sizes: R = 160 repeats, d = 6, n = 3000, T = 2, eps_inf = 3 (a few seconds in all).
Tolerances: each mean within 4.5 sd of the truth (sd = sqrt(Var / R); 12 values per case, so a
false alarm is ~1e-4 per case); the variance ratio, pooled over the 12 values, within 0.2 of 1 (one
sample variance has relative sd sqrt(2/R) ~ 0.11, the pooled one <= 0.05: 4 sd); the correlation
between the two rounds, pooled over items, within 0.15 of theory (sd of one sample correlation
<= 1/sqrt(R) ~ 0.08, pooled ~0.035: 4 sd), while every memoized protocol's theory, pooled, is above 0.3 (alpha = 0.8, or
0.6 for L-SOUE; RAPPOR's p = 0.1, q = 0.9),
so a path that redraws the PRR every round (correlation 0) fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds
from ldpbench_plugins.protocols import l_memo, l_naive

R, EPS = 160, 3.0
COUNTS = np.array([1200, 800, 500, 300, 200, 0])
N, D = int(COUNTS.sum()), COUNTS.size
STATIC = Population(COUNTS, record="sequence", rounds=Rounds(np.tile(np.repeat(np.arange(D), COUNTS), (2, 1))))


def _make(cls, **params):
    obj = cls.__new__(cls)
    for p in cls.params:
        setattr(obj, p.name, params.get(p.name, p.default))
    return obj


CASES = [
    (l_memo.LGRR, {"alpha": 0.8}),
    (l_memo.LOSUE, {"alpha": 0.8}),
    (l_memo.LOUE, {"alpha": 0.8}),
    (l_memo.LSUE, {"alpha": 0.8}),
    (l_memo.LSOUE, {"alpha": 0.6}),  # OUE's IRR reaches eps_1 < ~0.63 eps_inf only
    (l_memo.Rappor, {"p": 0.1, "q": 0.9}),
    (l_naive.NaiveRounds, {"oracle": "grr"}),
    (l_naive.NaiveRounds, {"oracle": "oue"}),
]


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
@pytest.mark.parametrize(("cls", "params"), CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_per_round_moments(cls, params, simulation):
    proto = _make(cls, **params)
    chain = proto.chain(D, EPS)
    est = np.empty((R, 2, D))
    for r in range(R):
        out = proto.run(STATIC, EPS, np.random.default_rng([20261127, r]), simulation=simulation)
        est[r] = [out["round-1"].frequencies, out["round-2"].frequencies]
    f = COUNTS / N
    var = chain.variance(N, f)
    z = (est.mean(axis=0) - f) / np.sqrt(var / R)
    assert np.abs(z).max() < 4.5, z
    ratio = est.var(axis=0, ddof=1) / var
    assert abs(ratio.mean() - 1) < 0.2, ratio
    rho = chain.round_covariance(N, f) / var
    centred = est - est.mean(axis=0)
    rho_hat = (centred[:, 0] * centred[:, 1]).sum(axis=0) / (R - 1) / np.sqrt(np.prod(est.var(axis=0, ddof=1), axis=0))
    assert abs((rho_hat - rho).mean()) < 0.15, (rho_hat, rho)
    if cls is not l_naive.NaiveRounds:
        assert rho.mean() > 0.3  # the check above can tell a memoized PRR from a fresh one


def test_l_olh_per_round_mean_and_variance():
    """L-OLH (per-user only): the same estimator with q* = 1/g (an ideal hash's; the real one's
    2^-32 bias is far below these tolerances); no covariance check (the hash ties rounds together
    beyond the PRR). Same sizes and tolerances as above."""
    proto = _make(l_memo.LOLH, alpha=0.5)
    chain = proto.chain(D, EPS)
    est = np.empty((R, 2, D))
    for r in range(R):
        out = proto.run(STATIC, EPS, np.random.default_rng([20261128, r]), simulation="per-user")
        est[r] = [out["round-1"].frequencies, out["round-2"].frequencies]
    f = COUNTS / N
    var = chain.variance(N, f)
    z = (est.mean(axis=0) - f) / np.sqrt(var / R)
    assert np.abs(z).max() < 4.5, z
    ratio = est.var(axis=0, ddof=1) / var
    assert abs(ratio.mean() - 1) < 0.2, ratio
