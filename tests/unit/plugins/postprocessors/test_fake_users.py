"""Cao et al.'s frequent-itemset detection of fake users: OUE reports built by hand (vectorized).

Planted setting: d = 64, n = 20,000 genuine OUE users at eps = 1 (Zipf 1.2 items), beta = 0.05 fake
users under MGA (every fake report supports the r = 10 targets, padded with random items to the
genuine number of ones, as Cao et al.'s MGA for OUE does). The bounds, derived here:

- recall = 1 exactly once the mined itemset is the target set (each fake supports all of it and
  k <= |T|);
- the expected number of genuine reports flagged is <= ``false_alarms`` = 1 by the choice of k, so
  with Poisson(1) at most 6 false alarms fail with probability < 1e-3 (one fixed seed: either way
  deterministic); precision >= m / (m + 6).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from ldpbench_plugins.postprocessors.fake_users import detect_fake_users, estimate_without, support_threshold

D, EPS, N, BETA, R = 64, 1.0, 20_000, 0.05, 10
P, Q = 0.5, 1 / (math.e + 1)


def _genuine(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    f = 1 / np.arange(1, D + 1) ** 1.2
    f /= f.sum()
    items = rng.choice(D, N, p=f)
    s = rng.random((N, D)) < Q
    s[np.arange(N), items] = rng.random(N) < P
    return s, np.bincount(items, minlength=D) / N  # the genuine users' frequencies


def _mga_oue(rng: np.random.Generator, m: int, targets: np.ndarray) -> np.ndarray:
    """MGA on OUE: the targets' bits set, plus random others up to round(p + (d - 1) q) ones."""
    others = np.setdiff1d(np.arange(D), targets)
    pad = round(P + (D - 1) * Q) - targets.size
    keys = rng.random((m, others.size))
    chosen = np.argsort(keys, axis=1)[:, :pad]  # a uniform pad-subset per fake user, no loop
    s = np.zeros((m, D), dtype=bool)
    s[:, targets] = True
    s[np.arange(m)[:, None], others[chosen]] = True
    return s


def test_mga_fakes_are_found_with_the_derived_precision_and_recall():
    rng = np.random.default_rng(1911)
    genuine, f = _genuine(rng)
    m = round(BETA * N / (1 - BETA))
    targets = np.sort(rng.choice(D, R, replace=False))
    support = np.vstack([genuine, _mga_oue(rng, m, targets)])
    order = rng.permutation(N + m)  # the detector sees reports in no telling order
    labels = np.r_[np.zeros(N, bool), np.ones(m, bool)][order]
    det = detect_fake_users(support[order], P, Q)
    np.testing.assert_array_equal(det.itemset, targets)
    tp = int(np.count_nonzero(det.flagged & labels))
    fp = int(np.count_nonzero(det.flagged & ~labels))
    assert tp == m  # recall 1
    assert fp <= 6  # precision >= m / (m + 6)
    # the estimate from the reports left is the genuine users' (within 5 sigma per item)
    est, kept = estimate_without(support[order], det.flagged, P, Q)
    assert kept == N + m - tp - fp
    sigma = math.sqrt(0.25 / (kept * (P - Q) ** 2))  # y (1 - y) <= 1/4
    assert np.abs(est - f).max() < 5 * sigma  # 5 sigma per item (64 items): fails w.p. < 4e-5


def test_without_fakes_nothing_or_almost_nothing_is_flagged():
    rng = np.random.default_rng(2021)
    genuine, _ = _genuine(rng)
    det = detect_fake_users(genuine, P, Q)
    assert np.count_nonzero(det.flagged) <= 6


def test_the_support_threshold_meets_its_false_alarm_bound():
    k = support_threshold(10, Q, 21_053, 1.0)
    assert 21_053 * binom.sf(k - 2, 9, Q) <= 1.0 < 21_053 * binom.sf(k - 3, 9, Q)
    assert support_threshold(3, 0.4, 10**6, 1.0) == 0  # three items at q = 0.4 cannot single anyone out


def test_the_post_processor_flags_re_estimates_and_declines_what_it_cannot_read():
    from support import postprocessor

    from ldpbench.errors import NotApplicable
    from ldpbench.types import Estimate

    rng = np.random.default_rng(5)
    genuine, _ = _genuine(rng)
    m = round(BETA * N / (1 - BETA))
    support = np.vstack([genuine, _mga_oue(rng, m, np.arange(R))])
    n_all = N + m
    f = (support.sum(0) / n_all - Q) / (P - Q)
    est = Estimate(f, n_all, EPS, "oue", P, Q, np.full(D, 0.1), report_supports=support)
    step = postprocessor("detect-fake-users")
    assert step.tags().requires_reports and step.tags().requires_pure
    out = step.apply(est, rng)
    assert out.flagged_reports[N:].all() and out.flagged_reports[:N].sum() <= 6
    kept = n_all - int(out.flagged_reports.sum())
    assert out.n == n_all and out.info["detect-fake-users"]["kept"] == kept
    np.testing.assert_allclose(out.frequencies, (genuine.sum(0) / N - Q) / (P - Q), atol=6 * 2 / N)
    np.testing.assert_allclose(out.variance, Q * (1 - Q) / (kept * (P - Q) ** 2))
    assert out.info["detect-fake-users"]["itemset"] == R
    with pytest.raises(NotApplicable, match="per-user"):
        step.apply(est.replace(report_supports=None), rng)
    grr_like = est.replace(p_star=0.5, q_star=0.5 / (D - 1))
    with pytest.raises(NotApplicable, match="supports one item"):
        step.apply(grr_like, rng)


@pytest.mark.parametrize("beta", [0.005, 0.05])
def test_greedy_mining_finds_the_target_set_even_with_few_fakes(beta):
    """``mining: greedy``: the mined set is the target set, every fake is flagged, and the genuine
    reports supporting all 10 targets number Poisson(<= N q^9 (q + (p - q) f_T)) ~ 0.04 in
    expectation: at most 2 fail with probability < 1e-5 (precision >= m / (m + 2))."""
    from ldpbench_plugins.postprocessors.fake_users import detect_greedy

    rng = np.random.default_rng(1911 + int(beta * 1000))
    genuine, _ = _genuine(rng)
    m = round(beta * N / (1 - beta))
    targets = np.sort(rng.choice(D, R, replace=False))
    support = np.vstack([genuine, _mga_oue(rng, m, targets)])
    labels = np.r_[np.zeros(N, bool), np.ones(m, bool)]
    det = detect_greedy(support, P, Q)
    np.testing.assert_array_equal(det.itemset, targets)
    assert np.count_nonzero(det.flagged & labels) == m
    assert np.count_nonzero(det.flagged & ~labels) <= 2


def test_greedy_mining_flags_nothing_without_fakes():
    from ldpbench_plugins.postprocessors.fake_users import detect_greedy

    genuine, _ = _genuine(np.random.default_rng(7))
    det = detect_greedy(genuine, P, Q)
    assert det.itemset.size == 0 and not det.flagged.any()
