"""ldpbench.privacy.shuffle: the published values, the exact divergence by enumeration, and the
bound against the exact privacy loss of a shuffled randomized response (docs/shuffling.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpbench.privacy import shuffle as sh


def test_published_values_of_feldman_mcmillan_talwar():
    # n = 10^5 reports at eps0 = 4, delta = 1e-6: about 0.17 numerically (Apple's
    # ml-shuffling-amplification), 0.54 in closed form (FMT21 Theorem 3.1).
    assert sh.fmt21_numerical(4.0, 10**5, 1e-6) == pytest.approx(0.17, abs=0.005)
    closed = sh.fmt21_closed_form(4.0, 10**5, 1e-6)
    assert closed == pytest.approx(0.54, abs=0.01)
    e0 = math.exp(4.0)
    by_hand = math.log(1 + (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4e6)) / math.sqrt(1e5) + 8 * e0 / 1e5))
    assert closed == pytest.approx(by_hand, rel=1e-12)
    # Wang et al.'s variation-ratio bound (general LDP parameters) is tighter still.
    assert sh.wang24_numerical(4.0, 10**5, 1e-6) == pytest.approx(0.118, abs=0.002)


def _exact_divergence(eps, n, p, alpha, r):
    """sum over (a, b) of max(0, P - e^eps Q), the two laws of the module docstring, enumerated."""
    rest = 1 - alpha - p * alpha
    total = 0.0
    for a, b in itertools.product(range(n + 1), repeat=2):
        if a + b > n:
            continue

        def others(x, y):
            if x < 0 or y < 0 or x + y > n - 1:
                return 0.0
            return float(stats.multinomial.pmf([x, y, n - 1 - x - y], n - 1, [r, r, 1 - 2 * r]))

        big_p = p * alpha * others(a - 1, b) + alpha * others(a, b - 1) + rest * others(a, b)
        big_q = alpha * others(a - 1, b) + p * alpha * others(a, b - 1) + rest * others(a, b)
        total += max(0.0, big_p - math.exp(eps) * big_q)
    return total


@pytest.mark.parametrize("k", [None, 5])
@pytest.mark.parametrize("n", [1, 2, 7])
def test_hockey_stick_equals_enumeration(n, k):
    vr = sh.wang24_parameters(1.5, k)
    alpha = vr.beta / (vr.p - 1)
    for eps in (0.0, 0.3, 1.0):
        for params in ((vr.p, alpha, alpha * vr.p / vr.q), (vr.p, 1 / (vr.p + 1), 1 / (2 * vr.p))):
            assert sh.hockey_stick(eps, n, *params) == pytest.approx(_exact_divergence(eps, n, *params), abs=1e-13)


def _shuffled_grr_delta(eps, eps0, d, first, others):
    """The exact delta(eps) of the shuffled histogram of GRR reports, neighbours (0, others) and
    (1, others), both directions: the law of a histogram is enumerated over all report tuples."""
    e0 = math.exp(eps0)
    keep, other = e0 / (e0 + d - 1), 1 / (e0 + d - 1)

    def law(values):
        hist = {}
        for reports in itertools.product(range(d), repeat=len(values)):
            pr = math.prod(keep if y == x else other for x, y in zip(values, reports))
            key = tuple(np.bincount(reports, minlength=d))
            hist[key] = hist.get(key, 0.0) + pr
        return hist

    p0, p1 = law([first[0], *others]), law([first[1], *others])
    keys = set(p0) | set(p1)
    ee = math.exp(eps)
    return max(
        sum(max(0.0, p0.get(h, 0) - ee * p1.get(h, 0)) for h in keys),
        sum(max(0.0, p1.get(h, 0) - ee * p0.get(h, 0)) for h in keys),
    )


@pytest.mark.parametrize("others", [(2, 2, 2, 2, 2), (0, 0, 1, 2, 2), (0, 0, 0, 0, 0)])
def test_bounds_hold_for_shuffled_randomized_response(others):
    # The true privacy loss of 6 shuffled GRR reports (d = 3, eps0 = 2) at each bound's epsilon
    # must not exceed delta: a bound that undercounts (a wrong event, a wrong clone rate) fails.
    eps0, d, delta, n = 2.0, 3, 0.05, 1 + len(others)
    for eps in (sh.fmt21_numerical(eps0, n, delta), sh.wang24_numerical(eps0, n, delta)):
        assert eps < eps0
        assert _shuffled_grr_delta(eps, eps0, d, (0, 1), others) <= delta
    # ... and the check can fail: at eps = 1 (a bound too small) the true delta exceeds delta.
    assert _shuffled_grr_delta(1.0, eps0, d, (0, 1), others) > delta


def test_wang24_krr_parameters_are_not_used_and_why():
    # Wang et al.'s k-RR row (beta = (p-1)/(p+k-1), q = p; their public code computes the same
    # pair as :func:`hockey_stick`) puts 6 shuffled GRR reports (d = 3, eps0 = 2) at eps = 1.566
    # for delta = 0.05; the exact loss there, with the other users holding the first input, is
    # 0.084. docs/shuffling.md "Not covered" says so; no row uses these parameters.
    eps0, d, delta, n = 2.0, 3, 0.05, 6
    vr = sh.wang24_parameters(eps0, k=d)
    alpha = vr.beta / (vr.p - 1)
    eps = sh._search(eps0, delta, lambda e: sh.hockey_stick(e, n, vr.p, alpha, alpha * vr.p / vr.q))
    assert eps == pytest.approx(1.566, abs=0.001)
    assert _shuffled_grr_delta(eps, eps0, d, (0, 1), (0,) * 5) == pytest.approx(0.0837, abs=0.0005)
    # Where every other user's leftover law equals the differing user's "neither" law Q (here the
    # others hold item 2, and Q is the point mass on 2: k = 3), the two-count reduction is exact
    # and the bound is tight: delta = 0.05 to 4 digits. The reduction needs that equality, which no
    # condition on n restores for neighbours whose other users hold x0 or x1 (docs/shuffling.md).
    assert _shuffled_grr_delta(eps, eps0, d, (0, 1), (2,) * 5) == pytest.approx(delta, abs=1e-4)


@pytest.mark.parametrize("bound", sh.BOUNDS)
def test_monotone_and_limits(bound):
    ns = [1, 10, 100, 10**3, 10**4]
    values = [sh.central_epsilon(bound, 2.0, n, 1e-6) for n in ns]
    assert all(v <= 2.0 for v in values)  # never above eps0
    assert all(a >= b for a, b in zip(values, values[1:]))  # more reports, more amplification
    assert values[0] == pytest.approx(2.0, abs=1e-5)  # one report: nothing to hide among
    assert values[-1] < 0.5 * 2.0
    # more delta allowed, less epsilon; more local epsilon, more central epsilon
    assert sh.central_epsilon(bound, 2.0, 10**4, 1e-3) <= values[-1]
    assert sh.central_epsilon(bound, 3.0, 10**4, 1e-6) >= values[-1]


@pytest.mark.parametrize("bound", sh.BOUNDS)
def test_large_eps0(bound):
    # At eps0 = 15, n = 10^5 (e^-15 n << 1 clones) there is almost nothing to hide among, and
    # beyond NUMERICAL_EPS0_MAX the numerical bounds report eps0 itself (regression: eps0 = 100
    # once gave 38, floating point losing 1 + e^eps).
    assert sh.central_epsilon(bound, 15.0, 10**5, 1e-6) == pytest.approx(15.0, abs=1e-3)
    assert sh.central_epsilon(bound, 100.0, 10**5, 1e-6) == 100.0


def test_closed_form_is_eps0_outside_its_regime():
    # eps0 > log(n / (16 log(2/delta))): Theorem 3.1 says nothing, eps0 holds anyway.
    assert sh.fmt21_closed_form(8.0, 10**4, 1e-6) == 8.0


@pytest.mark.parametrize(
    "args", [(0.0, 10, 1e-6), (1.0, 0, 1e-6), (1.0, 10, 0.0), (1.0, 10, 1.0), (float("inf"), 10, 1e-6)]
)
def test_refuses_bad_arguments(args):
    with pytest.raises(ValueError):
        sh.fmt21_closed_form(*args)
    with pytest.raises(ValueError):
        sh.central_epsilon(sh.FMT21_NUMERICAL, *args)


def test_unknown_bound():
    with pytest.raises(ValueError, match="unknown shuffle bound"):
        sh.central_epsilon("nope", 1.0, 10, 1e-6)
