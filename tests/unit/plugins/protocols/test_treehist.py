"""TreeHist: PEM's rounds one bit per level, pruned by a threshold (identification:
tests/statistical/test_treehist.py)."""

from __future__ import annotations

import numpy as np

from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols import _candidates as olh
from ldpbench_plugins.protocols.treehist import TreeHist


def test_a_level_keeps_what_passes_its_threshold_at_most_max_kept():
    th = TreeHist(k=2, max_kept=3)
    cand = np.arange(6, dtype=np.uint64)
    cut = olh.significance_threshold(10_000, 2.0, 6, 0.05) / 10_000
    est = np.array([0.5, cut * 0.9, cut * 1.1, 0.3, 0.2, 0.0])
    kept, e = th.select(cand, est, 10_000, 2.0, last=False)
    assert kept.tolist() == [0, 3, 4] and e.tolist() == [0.5, 0.3, 0.2]  # capped at 3, largest first
    kept, _ = th.select(cand, est, 10_000, 2.0, last=True)
    assert kept.tolist() == [0, 3]  # the last level returns at most k
    assert TreeHist(max_kept=10).select(cand, est, 10_000, 2.0, last=False)[0].tolist() == [0, 3, 4, 2]


def test_treehist_walks_one_bit_per_level_and_finds_planted_items():
    values = np.array([5, 2**20 + 9, 2**31 + 1, 2**32 - 7], dtype=np.uint64)
    pop = Population(np.array([40_000, 30_000, 20_000, 10_000]), domain=Domain.bit_strings(32), values=values)
    th = TreeHist(k=3)
    assert th.rounds(32) == list(range(1, 33)) and not th.tags().enumerates_domain
    for simulation in ("aggregate", "per-user"):
        (result,) = th.run(pop, 6.0, np.random.default_rng(3), simulation=simulation).values()
        assert result.items.tolist() == [5, 2**20 + 9, 2**31 + 1] and len(result.rounds) == 32
