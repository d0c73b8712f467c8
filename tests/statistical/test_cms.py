"""CMS's aggregate sampler against the law enumerated from its exact output table."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles.cms import CMS


@pytest.mark.parametrize("core", [1e-13, 0.3], ids=["default-core", "narrow-core"])
def test_cms_aggregate_has_the_exact_law_with_stray_users(core, monkeypatch):
    """The aggregate sampler's tail path (users whose K falls outside the core window) is exact:
    with a core of only the likeliest K values, most users stray and the support counts must still
    follow the law enumerated from the output table."""
    from ldpbench.testing import stats
    from ldpbench_plugins.oracles import cms as cms_module

    monkeypatch.setattr(cms_module, "_CORE_RELATIVE", core)
    counts = np.array([2, 1, 1])
    o = CMS(d=3, epsilon=1.0, m=8)
    P, S = o.output_table()
    per_item = [stats.categorical_law(S.astype(np.int64), P[:, v]) for v in range(3)]
    law = stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))
    rng = np.random.default_rng(11)
    draws = np.array([o.sample_support_counts(counts, rng) for _ in range(5000)])
    stats.exact_distribution_test(draws, law, label=f" of CMS aggregate counts, core {core}").check()
