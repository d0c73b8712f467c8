"""A heavy-hitter cell split into shards: the cut, the exact law of the split, and equal numbers
wherever the shards run (in the cell's process or as tasks of a Dask cluster)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ldpbench.types import Domain, Population
from ldpbench_plugins.protocols import _shards
from ldpbench_plugins.protocols.pem import PEM
from ldpbench_plugins.protocols.treehist import TreeHist


def bits_population(counts, bits=16, seed=0):
    rng = np.random.default_rng(seed)
    values = np.sort(rng.choice(1 << bits, size=len(counts), replace=False)).astype(np.uint64)
    return Population(np.asarray(counts, dtype=np.int64), domain=Domain.bit_strings(bits), values=values)


def test_shards_cut_the_items_by_users_and_cover_them_all():
    counts = np.array([5, 0, 3, 2, 0, 7, 1, 2], dtype=np.int64)  # n = 20
    starts = _shards.shard_starts(counts, 4)
    assert starts[0] == 0 and starts[-1] == counts.size and np.all(np.diff(starts) >= 0)
    # Shard j takes the items whose first user lies in [5j, 5j + 5): first users 0 5 5 8 10 10 17 18.
    assert starts.tolist() == [0, 1, 4, 6, 8]
    assert _shards.shard_starts(counts, 1).tolist() == [0, 8]


def test_users_chunks_are_the_repeated_items_in_order():
    values = np.array([3, 8, 9, 12], dtype=np.uint64)
    counts = np.array([4, 0, 7, 2], dtype=np.int64)
    chunks = list(_shards.users_chunks(values, counts, chunk=3))
    assert [c.size for c in chunks] == [3, 3, 3, 3, 1]
    assert np.concatenate(chunks).tolist() == np.repeat(values, counts).tolist()


def test_the_split_keeps_every_margin():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 40, size=300)
    sizes = np.array([1000, 1000, int(counts.sum()) - 2000])
    starts = _shards.shard_starts(counts, 5)
    shard_users = np.add.reduceat(counts, starts[:-1])
    table = _shards.shard_table(shard_users, sizes, rng)
    assert table.sum(axis=0).tolist() == sizes.tolist() and table.sum(axis=1).tolist() == shard_users.tolist()
    for j in range(5):
        part = slice(starts[j], starts[j + 1])
        _, groups = _shards.build_shard(np.arange(300)[part], counts[part], table[j], [1, 2, 3, 4], j, False)
        dense = np.zeros((3, starts[j + 1] - starts[j]), dtype=np.int64)
        for i, (idx, held) in enumerate(groups):
            assert np.all(held > 0)
            dense[i, idx] = held
        assert dense.sum(axis=0).tolist() == counts[part].tolist() and dense.sum(axis=1).tolist() == table[j].tolist()


def test_a_sharded_split_is_a_uniformly_random_split():
    """The group-0 (and group-2) count of one item is hypergeometric, sharded or not: mean N_0 c / n and variance
    N_0 (c/n)(1 - c/n)(n - N_0)/(n - 1). 4,000 draws of a 60-user, 4-shard population: the mean is
    checked to 5 sigma, the variance to 6 of its standard errors (about 2.3% each)."""
    counts = np.array([9, 4, 11, 6, 14, 3, 13], dtype=np.int64)  # n = 60
    n, sizes, item = 60, np.array([20, 20, 20]), 2
    starts = _shards.shard_starts(counts, 4)
    shard_users = np.add.reduceat(counts, starts[:-1])
    rng = np.random.default_rng(20261127)
    draws = np.empty((4000, 2))
    for t in range(len(draws)):
        table = _shards.shard_table(shard_users, sizes, rng)
        j = int(np.searchsorted(starts, item, side="right")) - 1
        part = slice(starts[j], starts[j + 1])
        _, groups = _shards.build_shard(np.arange(7)[part], counts[part], table[j], [t, 7, 7, 7], j, False)
        for col, group in enumerate((0, 2)):  # the first group, and the last (two halvings deep)
            idx, held = groups[group]
            draws[t, col] = held[idx == item - starts[j]].sum()
    c, n0 = counts[item], sizes[0]
    mean = n0 * c / n
    var = n0 * (c / n) * (1 - c / n) * (n - n0) / (n - 1)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / len(draws)))
    assert np.all(np.abs(draws.var(axis=0) / var - 1) < 6 * np.sqrt(2 / len(draws)))


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
@pytest.mark.parametrize("split", ["users", "budget"])
def test_shards_find_the_planted_items_with_the_unsharded_accounting(simulation, split):
    # 4 items of 15% each among 2,000 others: at eps = 4, n = 2 * 10^4 a miss is a > 10 sigma event.
    counts = np.concatenate([[3000] * 4, np.full(2000, 4)])
    pop = bits_population(counts, bits=24)
    out = PEM(k=4, shards=3, split=split).run(pop, 4.0, np.random.default_rng(5), simulation=simulation)["top-k"]
    planted = np.sort(pop.items[:4])
    assert np.sort(out.items).tolist() == planted.tolist()
    assert np.all(np.abs(out.frequencies - 0.15) < 0.06)
    plain = PEM(k=4, split=split).run(pop, 4.0, np.random.default_rng(5), simulation=simulation)["top-k"]
    assert out.bits_per_user == plain.bits_per_user and out.rounds == plain.rounds


def run_both_ways(protocol, pop, simulation):
    """The protocol run in this process and inside a task of a Dask cluster (2 thread workers)."""
    distributed = pytest.importorskip("distributed")
    here = protocol.run(pop, 4.0, np.random.default_rng(11), simulation=simulation)["top-k"]

    def task():
        return protocol.run(pop, 4.0, np.random.default_rng(11), simulation=simulation)["top-k"]

    def used_dask():
        with _shards.shard_runner() as runner:
            return type(runner).__name__

    with warnings.catch_warnings():
        # Without a dashboard the scheduler still serves HTTP, on another port when 8787 is taken.
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        there = client.submit(task, pure=False).result()
        assert client.submit(used_dask, pure=False).result() == "DaskShards"
    return here, there


def test_numbers_do_not_depend_on_where_the_shards_run():
    counts = np.concatenate([[1500] * 4, np.random.default_rng(3).integers(0, 5, size=3000)])
    pop = bits_population(counts, bits=32, seed=4)
    with _shards.shard_runner() as runner:
        assert isinstance(runner, _shards.LocalShards)
    for protocol, simulation in [(PEM(k=8, shards=4), "per-user"), (TreeHist(k=8, shards=3, step_bits=8), "aggregate")]:
        here, there = run_both_ways(protocol, pop, simulation)
        assert here.items.tolist() == there.items.tolist() and here.items.size > 0
        assert here.frequencies.tolist() == there.frequencies.tolist()


def test_the_shard_table_of_a_billion_users_keeps_its_margins():
    """NumPy's multivariate draw refuses 10^9 users; the scalar chain takes them (in law the same
    marginals: the mean of a 4-shard x 3-group table's cells is n_s N_i / n, checked to 6 sigma)."""
    shard_users = np.array([250_000_000, 250_000_001, 249_999_999, 250_000_000])
    sizes = np.array([333_333_334, 333_333_333, 333_333_333])
    table = _shards.shard_table(shard_users, sizes, np.random.default_rng(8))
    assert table.sum(axis=0).tolist() == sizes.tolist() and table.sum(axis=1).tolist() == shard_users.tolist()
    expected = shard_users[:, None] * sizes[None, :] / 10**9
    # sd of one cell: sqrt(N_i p (1 - p) (n - N_i) / (n - 1)) with p = 1/4: about 8,200 users.
    assert np.all(np.abs(table - expected) < 6 * 8_200)
    small = _shards.hypergeometric_split(np.array([5, 0, 7]), 6, np.random.default_rng(1))
    assert small.sum() == 6 and small[1] == 0
