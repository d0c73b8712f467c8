"""Apple's sketches over keys hashed on demand: the cms/hcms oracles' family and law, on both paths
(plugins/protocols/_keyed_sketch.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.hcms import HCMS
from ldpbench_plugins.protocols._candidates import item_keys
from ldpbench_plugins.protocols._keyed_sketch import KeyedSketch, RoundCMS, RoundHCMS

D = 12
KEYS = item_keys(np.arange(D, dtype=np.uint64))
COUNTS = np.array([500, 300, 120, 60, 20] + [10] * (D - 5), dtype=np.int64)


@pytest.mark.parametrize("kind, cls", [("cms", CMS), ("hcms", HCMS)])
def test_keys_hash_as_the_oracles_table_and_share_its_probabilities(kind, cls):
    oracle = cls(d=D, epsilon=1.5, m=32, k=6, estimator="apple", hash_seed=7)
    sketch = KeyedSketch(kind, 1.5, 32, 6, 7)
    assert (sketch.table(KEYS) == oracle.table).all()
    assert (sketch.p_star, sketch.q_star) == (oracle.p_star, oracle.q_star)


@pytest.mark.parametrize("kind, cls", [("cms", CMS), ("hcms", HCMS)])
def test_both_paths_follow_the_oracles_exact_moments_given_the_family(kind, cls):
    # 150 replicates per path of the estimates of D keys from 1,100 users (m = 16, k = 4: collisions
    # matter, so the apple variant's bias given the family is visible). Each path's mean must lie
    # within 4.5 sigma of the oracle's exact E[f^] (sigma = sqrt(Var / 150); the family-wise chance
    # of a false alarm over 2 x 12 keys is below 1e-4), its variance within [0.55, 1.6] of the
    # exact one (about 4 sigma of a 150-sample variance).
    n = int(COUNTS.sum())
    oracle = cls(d=D, epsilon=2.0, m=16, k=4, estimator="apple", hash_seed=3)
    sketch = KeyedSketch(kind, 2.0, 16, 4, 3)
    f = COUNTS / n
    mean, var = oracle.expected_estimate(f), oracle.variance(n, f)
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(D), COUNTS)
    for draw in (lambda: sketch.sketch_of(KEYS[users], rng), lambda: sketch.sample_sketch(KEYS, COUNTS, rng)):
        est = np.array([sketch.estimate_counts(sketch.support_counts(draw(), n, KEYS), n) / n for _ in range(150)])
        assert np.all(np.abs(est.mean(axis=0) - mean) < 4.5 * np.sqrt(var / 150)), (est.mean(axis=0), mean)
        ratio = est.var(axis=0, ddof=1) / var
        assert np.all((ratio > 0.55) & (ratio < 1.6)), ratio


def test_round_oracles_report_through_the_keyed_sketch_and_keep_the_oracles_law():
    for cls in (RoundCMS, RoundHCMS):
        oracle = cls(d=5, epsilon=1.0)
        assert oracle.variant == "apple"
        reports = oracle.perturb(np.arange(5).repeat(200), np.random.default_rng(0))
        rows = oracle.output_rows(reports)
        P, _ = oracle.output_table()
        assert rows.max() < P.shape[0]
        table_counts = CMS.support_counts if cls is RoundCMS else HCMS.support_counts
        assert (oracle.support_counts(reports) == table_counts(oracle, reports)).all()
