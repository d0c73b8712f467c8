"""NDCG@k (docs/algorithms.md §6.5, §8.1): flat, query-only and [A17]'s list of lists."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ndcg_metric, popularity_numbered, ranking_estimate

from ldpbench.types import Population
from ldpbench_plugins.metrics.ranking import EstimateSize, ndcg, within_group_ndcg

RNG = np.random.default_rng(0)


def test_a15_value():
    truth = Population(np.array([50, 30, 20]))  # a, b, c
    # estimated order (b, a, c)
    assert ndcg_metric(k=3).score(truth, ranking_estimate([0.3, 0.4, 0.1]), RNG) == pytest.approx(0.893497, abs=5e-7)
    # by hand: gains 2^rel - 1, discounts log2(i + 1)
    g = lambda r: 2**r - 1  # noqa: E731
    dcg = g(0.3) + g(0.5) / math.log2(3) + g(0.2) / 2
    idcg = g(0.5) + g(0.3) / math.log2(3) + g(0.2) / 2
    assert ndcg_metric(k=3).score(truth, ranking_estimate([0.3, 0.4, 0.1]), RNG) == pytest.approx(dcg / idcg, rel=1e-12)


def test_perfect_ranking_is_one_and_swaps_decrease_it():
    f = RNG.dirichlet(np.ones(30))
    truth = Population(np.rint(f * 1e6).astype(int))
    rel = truth.frequencies
    order = np.argsort(-rel, kind="stable")
    assert ndcg_metric(k=10).score(truth, ranking_estimate(rel), RNG) == pytest.approx(1.0)
    assert ndcg_metric(k=10).score(truth, ranking_estimate(rel * 0.5 + 0.01), RNG) == pytest.approx(1.0)  # order only
    base = 1.0
    scores = rel.copy()
    # Swapping the estimates of two items at ranks i < j <= k (different relevance) lowers NDCG.
    for i, j in [(0, 1), (2, 7), (0, 9), (4, 5)]:
        s = scores.copy()
        s[order[i]], s[order[j]] = s[order[j]], s[order[i]]
        assert ndcg_metric(k=10).score(truth, ranking_estimate(s), RNG) < base
    # and successive swaps of a ranked list keep lowering it
    values = []
    s = scores.copy()
    for i in range(5):
        s[order[i]], s[order[i + 1]] = s[order[i + 1]], s[order[i]]
        values.append(ndcg_metric(k=None).score(truth, ranking_estimate(s), RNG))
    assert all(b < a for a, b in zip([1.0] + values, values))


def test_item_id_ties_follow_item_ids_not_positions():
    truth = Population(np.array([10, 30, 20]))
    g = lambda r: 2**r - 1  # noqa: E731
    rel = np.array([10, 30, 20]) / 60
    idcg = g(rel[1]) + g(rel[2]) / math.log2(3) + g(rel[0]) / 2
    # all scores equal: ranking is by item id 0, 1, 2 (docs/algorithms.md §6.5's reading)
    dcg = g(rel[0]) + g(rel[1]) / math.log2(3) + g(rel[2]) / 2
    assert ndcg_metric(k=3, ties="item-id").score(truth, ranking_estimate([0.2, 0.2, 0.2]), RNG) == pytest.approx(
        dcg / idcg
    )
    # a partial estimate listing items 1, 2, 0 (e.g. a head list in the opt-in group's order):
    # still ids 0, 1, 2, whatever the positions
    listed = ranking_estimate([0.2, 0.2, 0.2], items=np.array([1, 2, 0]))
    assert ndcg_metric(k=3, ties="item-id").score(truth, listed, RNG) == pytest.approx(dcg / idcg)


def test_random_ties_depend_on_item_ids_not_positions_and_are_paired():
    truth = popularity_numbered(10)
    items = np.array([0, 3, 5, 7, 9])
    scores = np.array([0.2, 0.0, 0.0, 0.0, 0.1])
    shuffled = np.array([4, 2, 0, 3, 1])
    a = ranking_estimate(scores, items=items)
    b = ranking_estimate(scores[shuffled], items=items[shuffled])  # the same estimate, listed in another order
    for seed in range(20):
        va = ndcg_metric(k=4).score(truth, a, np.random.default_rng(seed))
        vb = ndcg_metric(k=4).score(truth, b, np.random.default_rng(seed))
        # Equal up to rounding only: the shares are rescaled by a sum over the listed items, taken
        # in listing order (a tie order by position would move the value by far more than 1e-12).
        assert va == pytest.approx(vb, rel=1e-12, abs=0)
    # and the tie order does change with the stream
    values = {ndcg_metric(k=4).score(truth, a, np.random.default_rng(seed)) for seed in range(20)}
    assert len(values) > 1


def test_random_ties_rank_the_whole_domain_fast():
    # Flat NDCG at Kosarak's size with almost all of the vector tied at 0 (a thresholded
    # estimate): the last places of the top 10 go to tied items, picked by one selection over d,
    # no full sort (a benchmark would time it; here it must run and be exact).
    d = 41_270
    rng = np.random.default_rng(1)
    truth = Population(rng.zipf(1.5, d).clip(max=10**6))
    f = np.zeros(d)
    kept = rng.choice(d, 5, replace=False)
    f[kept] = truth.frequencies[kept]
    value = ndcg_metric(k=10).score(truth, ranking_estimate(f), np.random.default_rng(2))
    assert 0 < value <= 1
    # the same value as a full lexsort with the same random keys
    keys = np.random.default_rng(2).random(d)
    order = np.lexsort((keys, -f))[:10]
    rel = truth.frequencies
    ideal = np.sort(2**rel - 1)[::-1][:10] @ (1 / np.log2(np.arange(2, 12)))
    assert value == pytest.approx(((2 ** rel[order] - 1) @ (1 / np.log2(np.arange(2, 12)))) / ideal, rel=1e-12)


def test_k_beyond_the_list_and_none_agree():
    truth = Population(np.array([5, 4, 3, 2, 1]))
    e = ranking_estimate([0.1, 0.3, 0.2, 0.25, 0.15])
    assert ndcg_metric(k=50).score(truth, e, RNG) == pytest.approx(ndcg_metric(k=None).score(truth, e, RNG))
    assert ndcg_metric(k=1).score(truth, e, RNG) == pytest.approx((2 ** (4 / 15) - 1) / (2 ** (5 / 15) - 1))


def test_partial_estimate_uses_rescaled_shares_of_its_items():
    truth = Population(np.array([40, 30, 20, 10]))
    e = ranking_estimate([0.1, 0.3], items=np.array([2, 0]))  # ranks item 0 above item 2: perfect
    assert ndcg_metric(k=2).score(truth, e, RNG) == pytest.approx(1.0)
    e = ranking_estimate([0.3, 0.1], items=np.array([2, 0]))
    rel = np.array([20, 40]) / 60  # shares within the evaluated universe
    expected = ndcg(rel, np.array([0.3, 0.1]), 2)
    assert ndcg_metric(k=2).score(truth, e, RNG) == pytest.approx(expected)
    assert ndcg_metric().score(truth, ranking_estimate([], items=np.array([], dtype=int)), RNG) != ndcg_metric().score(
        truth, e, RNG
    )
    assert math.isnan(ndcg_metric().score(truth, ranking_estimate([], items=np.array([], dtype=int)), RNG))


def test_global_ideal_penalizes_a_missing_true_top_item():
    # The estimate covers items 2 and 0 in the right order: perfect against what it covers, but the
    # true top 2 are items 0 and 1; item 1 is missing, so its ideal gain goes unmatched.
    truth = Population(np.array([40, 30, 20, 10]))
    e = ranking_estimate([0.1, 0.3], items=np.array([2, 0]))
    assert ndcg_metric(k=2).score(truth, e, RNG) == pytest.approx(1.0)
    share = truth.counts / 100
    gain = np.exp2(share) - 1
    disc = 1 / np.log2([2, 3])
    expected = (gain[0] * disc[0] + gain[2] * disc[1]) / (gain[0] * disc[0] + gain[1] * disc[1])
    assert ndcg_metric(k=2, ideal="global").score(truth, e, RNG) == pytest.approx(expected, rel=1e-12)
    # a full-domain estimate: both ideals are the same
    full = ranking_estimate([0.4, 0.1, 0.3, 0.2])
    assert ndcg_metric(k=3, ideal="global").score(truth, full, RNG) == pytest.approx(
        ndcg_metric(k=3).score(truth, full, RNG), rel=1e-12
    )


def test_global_ideal_for_queries_counts_every_record_of_a_query():
    # queries 0 (records 0, 1) and 1 (record 2) and 2 (record 3); the estimate lists records 0 and 3 only
    truth = Population(np.array([10, 50, 30, 20]), parents=np.array([0, 0, 1, 2]))
    e = ranking_estimate([0.5, 0.2], items=np.array([0, 3]))
    q_share = np.array([60, 30, 20]) / 110
    gain = np.exp2(q_share) - 1
    disc = 1 / np.log2([2, 3])
    expected = (gain[0] * disc[0] + gain[2] * disc[1]) / (gain[0] * disc[0] + gain[1] * disc[1])
    for structure in ("queries", "list-of-lists"):  # one listed URL per query: inner NDCG^q = 1
        got = ndcg_metric(k=2, structure=structure, ideal="global").score(truth, e, RNG)
        assert got == pytest.approx(expected, rel=1e-12)
    # covered: query 0's share is its listed record only (10 < 20), so the estimate's order is wrong there
    assert ndcg_metric(k=2, structure="queries").score(truth, e, RNG) < expected


def records(n_queries: int, max_urls: int, rng: np.random.Generator) -> Population:
    sizes = rng.integers(1, max_urls + 1, n_queries)
    parents = np.repeat(np.arange(n_queries), sizes)
    counts = rng.integers(0, 1000, parents.size)
    counts[0] += 1
    return Population(counts, parents=parents)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.sampled_from([1, 3, 5, None]))
def test_list_of_lists_is_at_most_query_only(seed, n_queries, k):
    rng = np.random.default_rng(seed)
    truth = records(n_queries, 5, rng)
    e = ranking_estimate(rng.random(truth.d))
    lol = ndcg_metric(k=k, structure="list-of-lists").score(truth, e, rng)
    q = ndcg_metric(k=k, structure="queries").score(truth, e, rng)
    assert lol <= q + 1e-12
    # ideal_inner: estimated divides by a smaller ideal, so it is never below the default; where
    # that ideal is 0 (the estimate ranks the true top-k queries' own URL lists with no relevant
    # URL first) the ratio is undefined and the score NaN, as the metric documents
    estimated = ndcg_metric(k=k, structure="list-of-lists", ideal_inner="estimated").score(truth, e, rng)
    assert estimated >= lol - 1e-12 or math.isnan(estimated)


def test_list_of_lists_equals_query_only_when_every_url_list_is_perfect():
    rng = np.random.default_rng(7)
    truth = records(20, 6, rng)
    # scores: a shuffled query order, URLs perfectly ordered within each query
    query_score = rng.permutation(20).astype(float)
    s = query_score[truth.parents] * 1e3 + truth.counts / 1e4
    e = ranking_estimate(s)
    q = ndcg_metric(k=5, structure="queries").score(truth, e, rng)
    assert q < 1
    assert ndcg_metric(k=5, structure="list-of-lists").score(truth, e, rng) == pytest.approx(q, rel=1e-12)
    # misorder one URL list of a top query: list-of-lists drops below query-only
    top_q = int(np.argmax(query_score))
    urls = np.flatnonzero(truth.parents == top_q)
    if urls.size > 1 and len(set(truth.counts[urls])) > 1:
        s2 = s.copy()
        s2[urls] = query_score[top_q] * 1e3 - truth.counts[urls] / 1e4
        assert ndcg_metric(k=5, structure="list-of-lists").score(truth, ranking_estimate(s2), rng) < q


def test_without_parents_every_structure_is_flat():
    truth = Population(np.array([9, 7, 5, 3, 1]))
    e = ranking_estimate([0.1, 0.3, 0.2, 0.25, 0.15])
    flat = ndcg_metric(k=3).score(truth, e, RNG)
    assert ndcg_metric(k=3, structure="queries").score(truth, e, RNG) == pytest.approx(flat)
    assert ndcg_metric(k=3, structure="list-of-lists").score(truth, e, RNG) == pytest.approx(flat)


def test_within_group_ndcg_by_hand():
    group = np.array([0, 0, 0, 1, 1, 2])
    rel = np.array([0.5, 0.3, 0.2, 0.0, 0.0, 1.0])
    scores = np.array([0.3, 0.5, 0.2, 0.1, 0.9, 0.0])
    out = within_group_ndcg(group, rel, scores, 3)
    assert out[0] == pytest.approx(0.893497, abs=5e-7)
    assert out[1] == 1.0  # nothing relevant: nothing to misplace
    assert out[2] == 1.0


def test_protocol_query_scores_are_used_unless_post_processed(plugins):
    """Through the engine's own pipeline code: an identity step keeps the protocol's query
    estimates; a step that changes the record vector drops them (not by step name)."""
    from ldpbench.engine.pipeline import apply_pipeline

    truth = Population(np.array([50, 10, 30, 10]), parents=np.array([0, 0, 1, 1]))
    # Record sums rank query 0 above query 1, as the truth does; the protocol's query estimates
    # say otherwise. Like Blender's, the records do not sum to 1 (the wildcard holds the rest).
    e = ranking_estimate([0.4, 0.1, 0.2, 0.05]).with_query_estimates([0, 1], [0.3, 0.7])
    protocol_scores = ndcg_metric(k=2, structure="queries")
    sums = ndcg_metric(k=2, structure="queries", query_scores="sum")
    assert sums.score(truth, e, RNG) == pytest.approx(1.0)
    assert protocol_scores.score(truth, e, RNG) < 1

    def pipeline(*names):
        steps = [plugins.create("postprocessor", name, {}) for name in names]
        return apply_pipeline(steps, e, np.random.default_rng(0))

    base = pipeline("base")
    assert base.steps == ("base",)
    assert protocol_scores.score(truth, base, RNG) < 1  # still the protocol's query estimates
    normalized = pipeline("norm-sub")
    assert not np.array_equal(normalized.frequencies, e.frequencies)
    assert protocol_scores.score(truth, normalized, RNG) == pytest.approx(1.0)  # back to sums
    assert protocol_scores.score(truth, pipeline("norm-sub", "base"), RNG) == pytest.approx(1.0)
    # query estimates stamped for another vector are not trusted
    stale = e.replace(query_estimates=dataclasses.replace(e.query_estimates, frequencies_digest="0" * 16))
    assert protocol_scores.score(truth, stale, RNG) == pytest.approx(1.0)
    # ... and nothing in info is read in their place
    loose = ranking_estimate([0.4, 0.1, 0.2, 0.05], info={"queries": [0, 1], "query_frequencies": [0.3, 0.7]})
    assert protocol_scores.score(truth, loose, RNG) == pytest.approx(1.0)


def test_blender_query_estimates_survive_an_identity_pipeline(plugins):
    from ldpbench.engine.pipeline import apply_pipeline

    rng = np.random.default_rng(4)
    pq = np.arange(1, 101) ** -1.0
    pu = np.arange(1, 5) ** -1.5
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    truth = Population(rng.multinomial(300_000, p), parents=np.repeat(np.arange(100), 4))
    out = plugins.create("protocol", "blender", {"head_list_size": 20}).run(truth, 4.0, rng)
    client = out["client"]
    # The protocol's query estimates reversed: a metric that uses them must get a bad ranking.
    qe = client.query_estimates
    order = np.argsort(qe.frequencies)
    reversed_q = np.empty(order.size)
    reversed_q[order] = np.sort(qe.frequencies)[::-1]
    rigged = client.with_query_estimates(qe.queries, reversed_q)
    base = apply_pipeline([plugins.create("postprocessor", "base", {})], rigged, rng)
    m = ndcg_metric(k=5, structure="queries")
    assert m.score(truth, base, rng) == m.score(truth, rigged, rng)
    assert m.score(truth, base, rng) < ndcg_metric(k=5, structure="queries", query_scores="sum").score(truth, base, rng)


def test_on_blender_output(plugins):
    rng = np.random.default_rng(3)
    pq = np.arange(1, 201) ** -1.0
    pu = np.arange(1, 6) ** -1.5
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    truth = Population(rng.multinomial(500_000, p), parents=np.repeat(np.arange(200), 5))
    out = plugins.create("protocol", "blender", {"head_list_size": 30}).run(truth, 4.0, rng)
    for e in out.values():
        flat = ndcg_metric(k=10).score(truth, e, rng)
        q = ndcg_metric(k=10, structure="queries").score(truth, e, rng)
        lol = ndcg_metric(k=10, structure="list-of-lists").score(truth, e, rng)
        assert 0.5 < flat <= 1 and 0.5 < lol <= q + 1e-12 <= 1 + 1e-12


def test_estimate_size():
    truth = Population(np.array([5, 4, 3]))
    assert EstimateSize().score(truth, ranking_estimate([0.1, 0.2, 0.3]), RNG) == 3
    assert EstimateSize().score(truth, ranking_estimate([0.1], items=np.array([2])), RNG) == 1


def test_registered(plugins):
    assert plugins.get("metric", "ndcg").cls.greater_is_better is True
    assert plugins.get("metric", "estimate-size").cls.greater_is_better is True
