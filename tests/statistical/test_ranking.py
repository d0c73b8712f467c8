"""NDCG@k's random ties (docs/algorithms.md §6.5): no reward for an order the estimate does not have."""

from __future__ import annotations

import numpy as np
import pytest
from support import ndcg_metric, popularity_numbered, ranking_estimate

from ldpbench_plugins.metrics.ranking import ndcg

RNG = np.random.default_rng(0)


def test_random_ties_do_not_reward_an_order_the_estimate_does_not_have():
    truth = popularity_numbered()
    flat = ranking_estimate(np.zeros(truth.d))  # no information at all
    assert ndcg_metric(k=3, ties="item-id").score(truth, flat, RNG) == pytest.approx(1.0)  # item ids leak the truth
    # A head list in the true order (as the opt-in group ranks it) with a client estimate of 0 everywhere:
    # ranking by position would score it 1.
    head = ranking_estimate(np.zeros(5), items=np.array([0, 1, 2, 3, 4]))
    assert ndcg(truth.frequencies[:5] / truth.frequencies[:5].sum(), np.zeros(5), 3) == pytest.approx(1.0)
    rng = np.random.default_rng(5)
    for e, d in ((flat, truth.d), (head, 5)):
        values = np.array([ndcg_metric(k=3).score(truth, e, rng) for _ in range(4000)])
        # With random ties the expected NDCG is that of a uniformly random order: the mean over
        # all orders of the d items (exact here by enumeration of the top-3 choices).
        rel = truth.frequencies[:d] / truth.frequencies[:d].sum()
        gains = 2**rel - 1
        disc = 1 / np.log2(np.arange(2, 5))
        expected = gains.mean() * disc.sum() / (np.sort(gains)[::-1][:3] @ disc)
        assert values.mean() == pytest.approx(expected, abs=4 * values.std() / np.sqrt(values.size))
        assert values.mean() < 0.9
