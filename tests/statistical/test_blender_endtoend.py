"""Blender end to end (docs/algorithms.md §8.6): on synthetic Zipf records with 10^6 users, 5% opt-in,
eps = 4, M = 50, the blended NDCG@10 is at least the opt-in-only and the client-only NDCG@10 on
the same head list, averaged over 10 runs. ([A17]'s ">95%" is for AOL/Yandex: reported, not asserted.)"""

from __future__ import annotations

import numpy as np

from ldpbench.types import Population


def zipf_records(n: int, queries: int, urls: int, rng: np.random.Generator) -> Population:
    pq = np.arange(1, queries + 1) ** -1.0
    pu = np.arange(1, urls + 1) ** -1.2
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    return Population(rng.multinomial(n, p), parents=np.repeat(np.arange(queries), urls))


def test_blended_ndcg_beats_each_group_alone(plugins):
    rng = np.random.default_rng(61)
    truth = zipf_records(1_000_000, 2000, 10, rng)
    blender = plugins.create("protocol", "blender", {"head_list_size": 50})
    metrics = {
        "flat": plugins.create("metric", "ndcg", {"k": 10}),
        "list-of-lists": plugins.create("metric", "ndcg", {"k": 10, "structure": "list-of-lists"}),
    }
    scores = {(m, g): [] for m in metrics for g in ("opt-in", "client", "blended")}
    l1 = {g: [] for g in ("opt-in", "client", "blended")}
    l1_metric = plugins.create("metric", "l1", {})
    for _ in range(10):
        out = blender.run(truth, 4.0, rng)
        assert out["blended"].items.size == 50
        for group, est in out.items():
            for m, metric in metrics.items():
                scores[(m, group)].append(metric.score(truth, est, rng))
            l1[group].append(l1_metric.score(truth, est, rng))
    mean = {key: float(np.mean(v)) for key, v in scores.items()}
    for m in metrics:
        assert mean[(m, "blended")] >= mean[(m, "opt-in")]
        assert mean[(m, "blended")] >= mean[(m, "client")]
    assert np.mean(l1["blended"]) <= min(np.mean(l1["opt-in"]), np.mean(l1["client"]))
