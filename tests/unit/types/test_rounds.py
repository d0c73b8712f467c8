"""Users over rounds (ldpbench/types/rounds.py) and the sequence population's hooks in data.py."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds, evolve, round_of, round_streams


def _population(items: np.ndarray, d: int) -> Population:
    return Population(np.bincount(items[0], minlength=d), record="sequence", rounds=Rounds(items))


def test_rounds_are_read_only_and_checked_against_round_zero():
    items = np.array([[0, 1, 1], [2, 1, 0]])
    pop = _population(items, 3)
    assert pop.rounds.T == 2 and pop.rounds.n == 3 and pop.n == 3
    with pytest.raises(ValueError):
        pop.rounds.items[0, 0] = 1
    with pytest.raises(ValueError, match="round 0"):
        Population(np.array([3, 0, 0]), record="sequence", rounds=Rounds(items))
    with pytest.raises(ValueError, match="needs 'rounds'"):
        Population(np.array([1, 2, 0]), record="sequence")
    with pytest.raises(ValueError, match="for record 'sequence'"):
        Population(np.array([1, 2, 0]), rounds=Rounds(items))


def test_truth_for_a_round_label_is_that_rounds_histogram():
    items = np.array([[0, 1, 1], [2, 1, 0]])
    pop = _population(items, 3)
    assert list(pop.truth_for("l-grr:round-2").counts) == [1, 1, 1]
    assert list(pop.truth_for("l-grr:round-1").counts) == [1, 2, 0]
    assert pop.truth_for("grr") is pop and pop.truth_for("l-grr:round-9") is pop
    assert round_of("l-grr(alpha=0.5):round-3") == 2 and round_of("pem:top-k") is None
    item_pop = Population(np.array([1, 2]))
    assert item_pop.truth_for("x:round-1") is item_pop


def test_sample_keeps_whole_sequences():
    rng = np.random.default_rng(0)
    items = rng.integers(0, 5, size=(4, 50))
    pop = _population(items, 5)
    sub = pop.sample(20, np.random.default_rng(1))
    assert sub.rounds.items.shape == (4, 20) and sub.n == 20
    assert list(sub.counts) == list(np.bincount(sub.rounds.items[0], minlength=5))


def test_change_models_and_per_round_seeding():
    first = np.repeat(np.arange(4), [400, 300, 200, 100])
    pmf = np.array([4.0, 3, 2, 1])
    static = evolve(first, pmf, 5, round_streams(np.random.default_rng(3), 5), model="static")
    assert (static == first).all()
    a = evolve(first, pmf, 6, round_streams(np.random.default_rng(3), 6), model="redraw", r=0.5)
    b = evolve(first, pmf, 3, round_streams(np.random.default_rng(3), 3), model="redraw", r=0.5)
    assert (a[:3] == b).all()  # round t depends on the seed and t only, not on T
    moved = (a[1:] != a[:-1]).mean()
    assert 0.2 < moved < 0.55  # re-drawn with r = 0.5, some to the same item (sd ~0.006)
    drift = evolve(first, pmf, 3, round_streams(np.random.default_rng(3), 3), model="drift", r=1.0, shift=1)
    # r = 1: round 2 is drawn from pmf rotated by 2: item 2 (share 0.4, vs 0.3: 6 sd apart at n = 1000)
    assert np.bincount(drift[2], minlength=4).argmax() == 2
    with pytest.raises(ValueError, match="unknown change model"):
        evolve(first, pmf, 2, round_streams(np.random.default_rng(3), 2), model="bogus")


def test_the_rounds_mean_output_is_scored_against_the_mean_of_the_rounds():
    items = np.array([[0, 1, 1], [2, 1, 0]])
    pop = _population(items, 3)
    truth = pop.truth_for("l-grr:rounds-mean")
    assert truth.record == "item" and list(truth.counts) == [2, 3, 1]
    assert truth.frequencies == pytest.approx((np.array([1, 2, 0]) / 3 + np.array([1, 1, 1]) / 3) / 2)


def test_buckets_are_contiguous_and_the_bucketed_population_sums_them():
    import numpy as np

    from ldpbench.types import Estimate, Population
    from ldpbench.types.data import bucket_of, declared_buckets

    assert bucket_of(12, 4).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert bucket_of(5, 2).tolist() == [0, 0, 0, 1, 1]  # widths differ by at most one
    pop = Population(np.arange(1, 6))
    b = pop.bucketed(2)
    assert b.counts.tolist() == [6, 9] and b.n == pop.n and b.labels == ["0-2", "3-4"]
    est = Estimate(frequencies=np.zeros(2), n=15, epsilon=1.0, mechanism="m", info={"buckets": 2})
    assert declared_buckets(est, 5) == 2 and declared_buckets(est, 2) == 0  # k = d is no bucketing
    assert declared_buckets(est.replace(info={"buckets": True}), 5) == 0
