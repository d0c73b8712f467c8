"""Apple's HCMS aggregate path (HR's splitting sampler) against the law enumerated from its table."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.oracles.hcms import HCMS


def test_hcms_apple_splitting_sampler_has_the_exact_law(monkeypatch):
    """Apple's HCMS aggregate path through HR's splitting sampler (forced for a tiny population,
    which would otherwise have its reports drawn) against the law enumerated from the table."""
    from ldpbench.testing import stats
    from ldpbench_plugins.oracles import hcms as hcms_module

    monkeypatch.setattr(hcms_module, "_PER_USER_UP_TO", 0)
    counts = np.array([2, 1, 1])
    o = HCMS(d=3, epsilon=1.0, m=4, k=3, estimator="apple")
    P, S = o.output_table()
    per_item = [stats.categorical_law(S.astype(np.int64), P[:, v]) for v in range(3)]
    law = stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))
    rng = np.random.default_rng(12)
    draws = np.array([o.sample_support_counts(counts, rng) for _ in range(5000)])
    stats.exact_distribution_test(draws, law, label=" of Apple HCMS aggregate counts (splitting)").check()
