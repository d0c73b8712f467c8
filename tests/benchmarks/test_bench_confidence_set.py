"""Cost of the leaderboard's tie marks (ldpbench/stats/paired.py with the model confidence set of
ldpbench/stats/mcs.py) for one group, up to the largest a shipped leaderboard holds: 48 rows x
100 repeats (1,128 pairs; 2,000 sign vectors drawn from the data's seed).

Workload: one shared gamma error per repeat plus each row's own lognormal noise, rows 0.5% apart,
so the elimination runs through every step. ``mcs`` times the confidence set alone, ``marks``
everything a group costs (ranks, the set, the paired bootstrap interval of every row).

Figures::

    .venv/bin/pytest tests/benchmarks/test_bench_confidence_set.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.stats.mcs import confidence_set_p_values
from ldpbench.stats.paired import compare_with_best


def _group(rows: int, repeats: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    shared = rng.gamma(4.0, 0.25, repeats)
    return shared * (1 + 0.005 * np.arange(rows))[:, None] + 0.05 * rng.lognormal(0.0, 1.0, (rows, repeats))


@pytest.mark.parametrize(("rows", "repeats"), [(6, 20), (48, 20), (48, 100)])
def test_bench_mcs(benchmark, rows, repeats):
    values = _group(rows, repeats)
    p = benchmark(confidence_set_p_values, values)
    assert p.shape == (rows,) and np.nanmax(p) == 1.0


@pytest.mark.parametrize(("rows", "repeats"), [(6, 20), (48, 100)])
def test_bench_marks(benchmark, rows, repeats):
    values = _group(rows, repeats)
    res = benchmark(compare_with_best, values, False)
    assert any(r.rank == 1 and r.tied_best for r in res)
