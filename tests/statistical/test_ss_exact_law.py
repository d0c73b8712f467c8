"""Subset Selection's aggregate sampler draws the support counts from their exact joint law.

The law of the count vector is enumerated from the output table (a sum over users of the
categorical law of each user's support pattern), and 4,000 aggregate draws are tested against it
with Pearson's chi-square (p >= 1e-6, ``ldpbench.testing.stats``). The cases cover k >= 2, where
independent binomials fail at once (the counts must sum to n k), small and large eps, k near d,
items nobody holds, and one user alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing.stats import categorical_law, exact_distribution_test, law_of_sum
from ldpbench_plugins.oracles._common import independent_binomials
from ldpbench_plugins.oracles.ss import SubsetSelection

CASES = [
    # (d, k, eps, counts)
    (4, 2, 1.0, (2, 1, 0, 1)),
    (5, 2, 0.5, (1, 2, 0, 1, 1)),
    (5, 3, 2.0, (3, 0, 1, 0, 1)),
    (6, 4, 5.0, (1, 1, 1, 0, 0, 2)),
    (6, 5, 0.3, (0, 0, 0, 0, 0, 1)),
]
DRAWS = 4_000


def support_law(oracle: SubsetSelection, counts: np.ndarray):
    P, S = oracle.output_table()
    patterns = S.astype(np.int64)
    per_item = [categorical_law(patterns, P[:, v]) for v in range(oracle.d)]
    return law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))


@pytest.mark.parametrize(("d", "k", "eps", "counts"), CASES)
def test_aggregate_counts_follow_the_exact_joint_law(d, k, eps, counts, ldpbench_rng):
    oracle = SubsetSelection(d=d, epsilon=eps, k=k)
    counts = np.array(counts)
    draws = np.array([oracle.sample_support_counts(counts, ldpbench_rng) for _ in range(DRAWS)])
    exact_distribution_test(draws, support_law(oracle, counts), label=f", ss d={d} k={k} eps={eps}").check()


def test_independent_binomials_would_fail(ldpbench_rng):
    """The test can fail: the same marginals drawn independently are rejected."""
    d, k, eps, counts = CASES[1]
    oracle = SubsetSelection(d=d, epsilon=eps, k=k)
    counts = np.array(counts)
    draws = np.array([independent_binomials(counts, oracle.p_star, oracle.q_star, ldpbench_rng) for _ in range(DRAWS)])
    assert not exact_distribution_test(draws, support_law(oracle, counts)).passed
