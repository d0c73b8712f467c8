"""Set-valued populations: the CSR pair validated at the boundary, the shipped sets, zipf-sets."""

from __future__ import annotations

import gzip
import io
from importlib import resources

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench_plugins.datasets.real import shipped_histogram
from ldpbench_plugins.datasets.sets import KosarakHeadSets, RetailSets, ZipfSets, decode_sets, zipf_sets


def test_a_set_population_counts_users_and_holders():
    pop = Population.from_sets(np.array([0, 2, 2, 5]), np.array([0, 3, 1, 2, 3]), 4)
    assert pop.record == "set" and pop.n == 3 and pop.set_sizes.tolist() == [2, 0, 3]
    assert pop.counts.tolist() == [1, 1, 1, 2]
    assert np.allclose(pop.frequencies, [1 / 3, 1 / 3, 1 / 3, 2 / 3])  # shares of users: sum = mean size
    sample = pop.sample(2, np.random.default_rng(0))
    assert sample.n == 2 and sample.counts.sum() == sample.members.size
    assert Population(np.array([3, 2])).n == 5  # the item path unchanged


@pytest.mark.parametrize(
    ("offsets", "members", "counts", "message"),
    [
        (None, None, [1, 1], "needs 'offsets'"),
        ([0, 2], [0, 0], [2, 0], "lists an item twice in the set of user 0"),
        ([0, 3], [0, 1], [1, 1], "end at len"),
        ([0, 2, 1], [0, 1], [1, 1], "never decrease"),
        ([0, 2], [0, 5], [1, 1], "histogram positions"),
        ([0, 2], [0, 1], [2, 1], "item counts over all sets"),
    ],
)
def test_a_malformed_set_population_is_refused(offsets, members, counts, message):
    arrays = {} if offsets is None else {"offsets": np.array(offsets), "members": np.array(members)}
    with pytest.raises(ValueError, match=message):
        Population(np.array(counts), record="set", **arrays)


def test_sets_are_for_the_set_record_only():
    with pytest.raises(ValueError, match="for record 'set'"):
        Population(np.array([1]), offsets=np.array([0, 1]), members=np.array([0]))


def test_the_shipped_retail_sets_hold_every_transaction_and_the_item_histogram():
    pop = RetailSets().load(np.random.default_rng(0))
    assert (pop.n, pop.d, int(pop.members.size)) == (88_162, 16_470, 908_577)
    counts, labels = shipped_histogram("retail")  # no transaction of Retail lists an item twice
    by_id = dict(zip(labels, counts.tolist()))
    assert [by_id[label] for label in pop.labels] == pop.counts.tolist()
    assert pop.labels[0] == "39" and pop.counts[0] == 50_675  # positions rank items, most held first


def test_the_shipped_kosarak_head_sets_are_the_partial_sample():
    pop = KosarakHeadSets().load(np.random.default_rng(0))
    assert (pop.n, pop.d, int(pop.members.size)) == (36_682, 17_034, 294_008)  # one repeat dropped
    assert pop.info["partial"] and pop.labels[:3] == ["6", "3", "11"]


def test_decoding_round_trips_and_refuses_a_foreign_file():
    raw = gzip.GzipFile(
        fileobj=io.BytesIO(resources.files("ldpbench_data").joinpath("kosarak-head-sets.sets.gz").read_bytes())
    ).read()
    offsets, members, ids = decode_sets(raw)
    assert offsets[-1] == members.size and ids.size == 17_034
    from ldpbench.errors import UsageError

    with pytest.raises(UsageError, match="magic"):
        decode_sets(b"item,count\n")


def test_zipf_sets_follow_the_stated_law():
    # Draws: 1 + Poisson(mean_size - 1) per user, i.i.d. Zipf items, the distinct ones kept; with
    # d large against the draws repeats are rare, so the mean size is about mean_size.
    offsets, members = zipf_sets(20_000, 10_000, 0.0, 3.0, np.random.default_rng(1))
    sizes = np.diff(offsets)
    assert sizes.min() >= 1 and abs(sizes.mean() - 3.0) < 0.05  # sd of the mean ~0.01
    pop = ZipfSets(n=20_000, d=50, s=1.5, mean_size=3).load(np.random.default_rng(2))
    assert pop.record == "set" and pop.counts[0] > pop.counts[10] > pop.counts[49]
    assert pop.set_sizes.max() <= 50


def test_a_resampled_stand_in_keeps_the_law_of_the_sets():
    pop = KosarakHeadSets(users=50_000).load(np.random.default_rng(4))
    head = KosarakHeadSets().load(np.random.default_rng(0))
    assert pop.n == 50_000 and pop.d == head.d and "resampled" in pop.name
    # the top item's share 0.606 (sd of the resampled share ~0.0022): within 0.01
    assert abs(pop.frequencies[0] - head.frequencies[0]) < 0.01
