"""The set-query and top-k metrics ([W20] §V; docs/algorithms.md §6.2–6.3, §8.1)."""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

import ldpbench_plugins.metrics.queries as queries
from ldpbench.engine.pipeline import apply_pipeline
from ldpbench.types import Estimate, Population

PLUGINS = builtin_plugins()


def metric(name: str, **params):
    return PLUGINS.create("metric", name, params)


def post(name: str, **params):
    return PLUGINS.create("postprocessor", name, params)


def population(counts) -> Population:
    return Population(np.asarray(counts))


def estimate(f, **kw) -> Estimate:
    f = np.asarray(f, dtype=float)
    return Estimate(frequencies=f, n=1000, epsilon=1.0, p_star=0.5, q_star=0.25, variance=np.full(f.size, 1e-4), **kw)


def noisy(truth: Population, sd: float, seed: int) -> np.ndarray:
    return truth.frequencies + np.random.default_rng(seed).normal(0, sd, truth.d)


def brute_force_set_query(truth_f, answers_fn, d, size, queries, seed) -> float:
    """The definition, one query at a time, drawing subsets the same way the metric does."""
    rng = np.random.default_rng(seed)
    errors = []
    for _ in range(queries):
        s = rng.choice(d, size, replace=False)
        errors.append((answers_fn(s) - truth_f[s].sum()) ** 2)
    return float(np.mean(errors))


TRUTH = population(np.random.default_rng(1).integers(0, 500, 300))


@pytest.mark.parametrize("rho", [0.5, 10, 50, 73.3, 100])
def test_set_query_matches_the_definition(rho):
    f_hat = noisy(TRUTH, 0.01, 2)
    m = metric("set-query", rho=rho, queries=40)
    size = max(1, round(rho * TRUTH.d / 100))
    assert m.subset_size(TRUTH.d) == size
    got = m.score(TRUTH, estimate(f_hat), np.random.default_rng(7))
    want = brute_force_set_query(TRUTH.frequencies, lambda s: f_hat[s].sum(), TRUTH.d, size, 40, 7)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_set_query_scores_post_pos_on_its_clipped_answers():
    f_hat = noisy(TRUTH, 0.05, 3) - 0.01  # many negative subset sums
    est = apply_pipeline([post("post-pos")], estimate(f_hat), np.random.default_rng(0))
    m = metric("set-query", rho=5, queries=60)
    got = m.score(TRUTH, est, np.random.default_rng(11))
    want = brute_force_set_query(
        TRUTH.frequencies, lambda s: max(f_hat[s].sum(), 0.0), TRUTH.d, m.subset_size(TRUTH.d), 60, 11
    )
    assert got == pytest.approx(want, rel=1e-12)
    unclipped = metric("set-query", rho=5, queries=60).score(TRUTH, estimate(f_hat), np.random.default_rng(11))
    assert got < unclipped  # clipping a negative sum towards a non-negative truth only helps


def test_set_query_error_is_symmetric_for_estimates_summing_to_one():
    # A11: with sum f' = 1, the error of S equals that of its complement, to 1e-12.
    f_norm = apply_pipeline([post("norm-sub")], estimate(noisy(TRUTH, 0.01, 4)), None).frequencies
    subsets = queries._Subsets(TRUTH.d, 90, 50, np.random.default_rng(5))
    f = TRUTH.frequencies
    err_s = (subsets.sums(f_norm) - subsets.sums(f)) ** 2
    err_c = ((f_norm.sum() - subsets.sums(f_norm)) - (f.sum() - subsets.sums(f))) ** 2
    np.testing.assert_allclose(err_s, err_c, rtol=0, atol=1e-12)
    # ... and at rho = 100% the only subset is the domain: the error is (sum f' - 1)^2 = 0.
    assert metric("set-query", rho=100).score(TRUTH, estimate(f_norm), np.random.default_rng(0)) < 1e-24


def test_set_query_sums_over_a_subset_or_its_complement_agree():
    x = np.random.default_rng(4).normal(size=TRUTH.d)
    for size in (1, 120, 150, 151, 299, 300):
        rng = np.random.default_rng(size)
        subsets = queries._Subsets(TRUTH.d, size, 7, rng)
        assert subsets.complement == (size > TRUTH.d - size)
        rng = np.random.default_rng(size)
        want = [x[rng.choice(TRUTH.d, size, replace=False)].sum() for _ in range(7)]
        np.testing.assert_allclose(subsets.sums(x), want, rtol=0, atol=1e-12)


def test_set_query_reuses_subsets_only_for_the_same_generator_state():
    m = metric("set-query", rho=20, queries=30)
    est = estimate(noisy(TRUTH, 0.01, 8))
    fresh = metric("set-query", rho=20, queries=30)
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    first = m.score(TRUTH, est, rng_a)
    again = m.score(TRUTH, est, rng_b)  # same state: a cache hit
    assert first == again == fresh.score(TRUTH, est, np.random.default_rng(9))
    # The generator is left where a real draw leaves it.
    assert rng_a.bit_generator.state == rng_b.bit_generator.state
    assert rng_a.random() == rng_b.random()
    other = m.score(TRUTH, est, np.random.default_rng(10))
    assert other == fresh.score(TRUTH, est, np.random.default_rng(10)) != first
    # The true subset sums are remembered per truth, not per call.
    truth2 = population(np.random.default_rng(2).integers(0, 500, 300))
    assert m.score(truth2, est, np.random.default_rng(10)) == pytest.approx(
        metric("set-query", rho=20, queries=30).score(truth2, est, np.random.default_rng(10)), rel=1e-15
    )


def _one_query_at_a_time(d, size, queries_, rng):
    """The subsets as the metric first built them: a mask per query, then its nonzero columns."""
    complement = size > d - size
    rows = []
    for _ in range(queries_):
        keep = np.zeros(d, dtype=bool)
        keep[rng.choice(d, size, replace=False)] = True
        rows.append(np.flatnonzero(~keep if complement else keep))
    return np.concatenate(rows)


@pytest.mark.parametrize("size", [1, 40, 150, 151, 260, 300])
def test_set_query_subsets_are_those_of_one_draw_per_query(size):
    # The same draws in the same order: the same matrix, bit for bit, and the generator left in
    # the same state (the cache below relies on both).
    rng_new, rng_old = np.random.default_rng(size), np.random.default_rng(size)
    got = queries._Subsets(TRUTH.d, size, 9, rng_new).matrix
    want = _one_query_at_a_time(TRUTH.d, size, 9, rng_old)
    np.testing.assert_array_equal(got.indices, want)
    np.testing.assert_array_equal(got.indptr, np.arange(10) * (want.size // 9))
    assert rng_new.bit_generator.state == rng_old.bit_generator.state


def test_set_query_subsets_are_shared_by_every_metric_instance_in_a_process():
    # Another cell (another mechanism, same repeat) builds a new metric with a generator in the
    # same state: it reuses the subsets, and gets the numbers a fresh draw gives.
    queries._DRAWN.clear()
    est = estimate(noisy(TRUTH, 0.01, 12))
    first = metric("set-query", rho=30, queries=25).score(TRUTH, est, np.random.default_rng(21))
    assert len(queries._DRAWN) == 1
    (entry,) = queries._DRAWN.values()
    again = metric("set-query", rho=30, queries=25).score(TRUTH, est, np.random.default_rng(21))
    (entry_again,) = queries._DRAWN.values()
    assert again == first and entry_again[0] is entry[0]
    queries._DRAWN.clear()
    assert metric("set-query", rho=30, queries=25).score(TRUTH, est, np.random.default_rng(21)) == first


def test_set_query_subset_cache_is_bounded(monkeypatch):
    queries._DRAWN.clear()
    monkeypatch.setattr(queries, "_SUBSET_CACHE_BYTES", 1)
    for seed in range(3):
        queries._drawn_subsets(TRUTH.d, 50, 10, np.random.default_rng(seed))
        assert len(queries._DRAWN) == 1  # the newest only
    queries._DRAWN.clear()


def test_set_query_respects_estimate_items():
    items = np.array([5, 17, 3, 250, 99, 42, 7, 8, 9, 10])
    f_hat = TRUTH.frequencies[items] + 0.001
    got = metric("set-query", rho=50, queries=20).score(TRUTH, estimate(f_hat, items=items), np.random.default_rng(1))
    assert got == pytest.approx(25e-6, rel=1e-9)  # 5 items, each off by 0.001


def test_topk_uses_the_true_top_k_with_ties_by_index():
    truth = population([5, 9, 9, 1, 0, 9])
    f = truth.frequencies
    f_hat = f + np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    # True top 2: items 1 and 2 (tie with 5 broken by index).
    got = metric("topk-mse", k=2).score(truth, estimate(f_hat), None)
    assert got == pytest.approx((0.2**2 + 0.3**2) / 2, rel=1e-12)
    # Estimated top 2: items 5 and 2.
    got = metric("topk-mse", k=2, by="estimate").score(truth, estimate(f_hat), None)
    assert got == pytest.approx((0.6**2 + 0.3**2) / 2, rel=1e-12)
    # k beyond the domain: every item.
    got = metric("topk-mse", k=100).score(truth, estimate(f_hat), None)
    assert got == pytest.approx(np.mean(np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]) ** 2), rel=1e-12)


def test_read_only_truths_score_as_writable_ones_through_the_caches():
    """A frozen population's counts key the remembered top-k items and true set sums: the scores
    are those of a writable copy (no cache), bit for bit, and a second truth is not served the first's."""
    from ldpbench.boundary.values import frozen_population

    for seed in (1, 2):  # two truths in turn: nothing of the first is reused for the second
        counts = np.random.default_rng(seed).integers(0, 50, 300)
        counts[:10] = 40  # ties
        frozen, plain = frozen_population(population(counts)), population(counts.copy())
        est = estimate(noisy(plain, 0.01, seed))
        for m in (metric("topk-mse", k=20), metric("set-query", rho=30, queries=7)):
            scores = [m.score(t, est, np.random.default_rng(9)) for t in (frozen, plain, frozen)]
            assert len({np.float64(v).view(np.int64) for v in scores}) == 1, (m.name, scores)
    with pytest.raises(ValueError, match="estimate has 5 items"):
        metric("set-query").score(frozen, estimate(np.zeros(5)), np.random.default_rng(0))


def test_topk_scores_post_pos_on_its_clipped_single_value_answers():
    truth = population([0, 0, 10, 0])
    f_hat = np.array([-0.2, 0.1, 0.9, 0.0])
    est = apply_pipeline([post("post-pos")], estimate(f_hat), None)
    got = metric("topk-mse", k=4).score(truth, est, None)
    assert got == pytest.approx((0.0 + 0.01 + 0.01 + 0.0) / 4, rel=1e-12)


def test_norm_and_base_differ_on_top_k_by_the_constant_shift_only():
    # docs/algorithms.md §8.3: "Norm and Base have identical top-k behaviour up to the constant shift".
    f_hat = noisy(TRUTH, 0.01, 12)
    normed = apply_pipeline([post("norm")], estimate(f_hat), None)
    shift = (1 - f_hat.sum()) / f_hat.size
    top = np.argsort(-TRUTH.frequencies, kind="stable")[:10]
    want = np.mean((f_hat[top] + shift - TRUTH.frequencies[top]) ** 2)
    assert metric("topk-mse", k=10).score(TRUTH, normed, None) == pytest.approx(want, rel=1e-12)


def test_metrics_are_registered_with_the_documented_defaults():
    sq = PLUGINS.get("metric", "set-query")
    assert {p.name: p.default for p in sq.params} == {"rho": 10.0, "queries": 100}
    tk = PLUGINS.get("metric", "topk-mse")
    assert {p.name: p.default for p in tk.params} == {"k": 32, "by": "truth"}
    assert sq.cls.greater_is_better is False and tk.cls.greater_is_better is False


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("size", [40, 150, 151, 260])
def test_set_query_batched_sums_are_those_of_one_product_per_vector_bit_for_bit(size):
    """``remember_sums`` sums k vectors in one product: each column's bits are those of ``S x``
    (the same order of additions), over a subset and over a complement."""
    queries._SUMS.clear()
    subsets = queries._Subsets(TRUTH.d, size, 40, np.random.default_rng(size))
    rng = np.random.default_rng(7)
    # wide magnitudes, so that another order of additions would round differently
    vectors = [rng.normal(size=TRUTH.d) * 10.0 ** rng.integers(-8, 8, TRUTH.d) for _ in range(6)]
    want = [subsets._sums(x) for x in vectors]
    subsets.remember_sums([*vectors, vectors[2].copy()])  # a repeated vector is summed once
    for x, w in zip(vectors, want):
        assert queries._SUMS.get(subsets.token, x) is not None  # prepared, found by its bits
        np.testing.assert_array_equal(_bits(subsets.sums(x)), _bits(w))
    queries._SUMS.clear()


def test_set_query_remembers_sums_by_the_vector_s_bits_only():
    queries._SUMS.clear()
    subsets = queries._Subsets(TRUTH.d, 100, 20, np.random.default_rng(3))
    other = queries._Subsets(TRUTH.d, 100, 20, np.random.default_rng(4))
    x = np.random.default_rng(5).normal(size=TRUTH.d)
    first = subsets.sums(x)
    first[0] = 99.0  # a fresh array each time: the caller may change it
    assert subsets.sums(x)[0] != 99.0
    np.testing.assert_array_equal(subsets.sums(x.copy()), subsets._sums(x))
    # Other subsets, or a vector one bit away (-0.0 is not 0.0), are not the same sums.
    assert queries._SUMS.get(other.token, x) is None
    y = x.copy()
    y[7] = np.nextafter(y[7], np.inf)
    assert queries._SUMS.get(subsets.token, y) is None
    z, zneg = np.zeros(TRUTH.d), np.zeros(TRUTH.d)
    zneg[3] = -0.0
    subsets.sums(z)
    assert queries._SUMS.get(subsets.token, zneg) is None
    queries._SUMS.clear()


def test_set_query_sums_cache_tells_colliding_checksums_apart():
    """Two vectors whose 64-bit words have the same wrapping sum share a key, not their sums."""
    queries._SUMS.clear()
    subsets = queries._Subsets(TRUTH.d, 100, 20, np.random.default_rng(3))
    x = np.random.default_rng(6).random(TRUTH.d)
    y = x.copy()
    w = y.view(np.int64)
    w[0] += 1
    w[1] -= 1  # the same sum of words, other numbers
    assert queries._SumsCache.key(x)[0] == queries._SumsCache.key(y)[0]
    np.testing.assert_array_equal(subsets.sums(x), subsets._sums(x))
    np.testing.assert_array_equal(subsets.sums(y), subsets._sums(y))
    np.testing.assert_array_equal(subsets.sums(x), subsets._sums(x))
    queries._SUMS.clear()


def test_set_query_sums_cache_is_bounded():
    cache = queries._SumsCache(most_bytes=3 * TRUTH.d * 8)
    rng = np.random.default_rng(8)
    vectors = [rng.random(TRUTH.d) for _ in range(5)]
    for x in vectors:
        cache.put(0, x, np.ones(4))
    assert [cache.get(0, x) is not None for x in vectors] == [False, False, True, True, True]
    got = cache.get(0, vectors[-1])
    assert not got.flags.writeable


def test_set_query_prepare_gives_the_scores_of_unprepared_calls():
    m = metric("set-query", rho=40, queries=30)
    ests = [estimate(noisy(TRUTH, 0.01, s)) for s in range(4)]
    ests.append(post("post-pos").apply(ests[0], np.random.default_rng(0)))  # same vector, clipped answers
    queries._SUMS.clear()
    want = [m.score(TRUTH, e, np.random.default_rng(31)) for e in ests]
    queries._SUMS.clear()
    m.prepare(TRUTH, ests, np.random.default_rng(31))
    subsets = queries._drawn_subsets(TRUTH.d, m.subset_size(TRUTH.d), 30, np.random.default_rng(31))
    assert all(queries._SUMS.get(subsets.token, e.frequencies) is not None for e in ests)
    assert [m.score(TRUTH, e, np.random.default_rng(31)) for e in ests] == want
    queries._SUMS.clear()
