"""One heavy-hitter cell split into shards of users that run anywhere: in the cell's own process, or
as tasks of the Dask cluster the cell runs on (private; docs/scale-out.md, "One cell over many
workers").

The population's sorted histogram is cut into ``S`` **shards**, contiguous ranges of items holding
about ``n / S`` users each (a deterministic cut, no randomness). A run of a prefix protocol (PEM,
TreeHist) with ``r`` groups of sizes ``N_0 .. N_{r-1}`` then goes:

1. the driver (the cell) draws the **shard-by-group table** ``T[s, i]``, how many of shard s's users
   fall in group i: a chain over the groups of multivariate hypergeometric draws from the shards'
   user totals (O(S r));
2. shard s splits its own histogram into groups of sizes ``T[s, :]`` (multivariate hypergeometric
   draws by recursive halving over the groups, :func:`split_groups`: the expensive step) with a
   stream keyed by ``(cell seed, s)`` alone, and keeps each group as a sparse histogram;
3. each round i, the driver lists the candidates and every shard returns, for its group-i users,
   either the holders of each candidate (aggregate path: the driver then draws the support counts
   ``Binomial(N_c, p*) + Binomial(N_i - N_c, q*)`` from their sum) or the support counts of its
   users' OLH reports (per-user path: the reports drawn in chunks with a stream keyed by
   ``(cell seed, s, i)``; the driver sums them).

**Exact law.** A uniformly random split of n users into groups of fixed sizes is, shard by shard,
a table ``T`` with the multivariate hypergeometric law of step 1 (how many of each shard's users
each group takes) and, given ``T``, independent uniform splits of every shard's users into groups of
sizes ``T[s, :]`` (step 2); the sum over shards of independent ``Binomial(N_c^s, p)`` is
``Binomial(N_c, p)``. So a sharded run has the same law as the unsharded one (``pem``'s docstring);
its numbers differ from an unsharded run's (other streams) but **not with where the shards run**:
every random draw is keyed by the cell's stream and the shard's index, never by a worker.

**Where they run.** In a cell run by the ``dask`` executor, the shards are tasks of the same
cluster: the cell task leaves its worker's thread pool (``distributed.worker_client``), scatters
each shard's items to the workers, keeps each shard's group histograms on its worker between rounds
(a future per shard) and gathers only the per-candidate vectors each round. Anywhere else they run
one after another in the cell's process, with the same numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from . import _candidates as olh

#: Users perturbed at once on a shard's per-user path (fixed, never derived from the machine: the
#: chunks decide how a shard's stream is consumed).
CHUNK_USERS = 1 << 20


def shard_starts(counts: np.ndarray, shards: int) -> np.ndarray:
    """The item index each shard starts at (``S + 1`` cut points, the last ``len(counts)``): shard j
    takes the items whose first user falls in ``[j n / S, (j + 1) n / S)``. Deterministic."""
    first_user = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    n = int(first_user[-1])
    targets = (np.arange(1, shards, dtype=np.int64) * n) // shards
    cuts = np.searchsorted(first_user[:-1], targets, side="left")
    return np.concatenate([[0], cuts, [counts.size]]).astype(np.int64)


#: NumPy's multivariate hypergeometric draw needs fewer users than this in all.
MVHG_LIMIT = 10**9


def hypergeometric_split(colors: np.ndarray, nsample: int, rng: np.random.Generator) -> np.ndarray:
    """How many of ``nsample`` users drawn without replacement come from each color (the multivariate
    hypergeometric law, drawn as a chain of marginals): NumPy's draw below its limit of 10^9 users,
    else the same chain of scalar hypergeometric draws in Python (for the few colors of the shard
    table: the shards of a cell of 10^9 users or more)."""
    colors = np.asarray(colors, dtype=np.int64)
    total = int(colors.sum())
    if total < MVHG_LIMIT:
        return rng.multivariate_hypergeometric(colors, int(nsample), method="marginals")
    if colors.size > 4096:
        raise ValueError(
            f"a shard holds {total:,} users, at least {MVHG_LIMIT:,}: raise 'shards' so that each holds fewer"
        )
    out = np.zeros(colors.size, dtype=np.int64)
    left, want = total, int(nsample)
    for j, c in enumerate(colors[:-1].tolist()):
        left -= c
        if want == 0:
            break
        try:
            out[j] = int(rng.hypergeometric(c, left, want)) if c else 0
        except ValueError:  # NumPy: each of the two counts below 10^9
            raise ValueError(
                f"{total:,} users are more than NumPy's hypergeometric draws take (each side below "
                f"{MVHG_LIMIT:,}): at most about 2 * 10^9 users per cell, with 'shards' >= 2"
            ) from None
        want -= int(out[j])
    else:
        out[-1] = want
    return out


def shard_table(shard_users: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``T[s, i]``: the users of shard s in group i, for a uniformly random split of all users into
    groups of the given ``sizes`` (a chain of multivariate hypergeometric draws over the groups)."""
    shard_users = np.asarray(shard_users, dtype=np.int64)
    table = np.empty((shard_users.size, len(sizes)), dtype=np.int64)
    left = shard_users.copy()
    for i, size in enumerate(sizes[:-1]):
        table[:, i] = hypergeometric_split(left, int(size), rng)
        left -= table[:, i]
    table[:, -1] = left
    return table


def stream(base: Sequence[int], *key: int) -> np.random.Generator:
    """The generator of one shard's step: keyed by the cell's entropy ``base`` and ``key``."""
    return np.random.default_rng(np.random.SeedSequence(list(base), spawn_key=tuple(key)))


def split_groups(
    counts: np.ndarray, sizes: np.ndarray, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """A uniformly random split of a histogram's users into groups of the given ``sizes``, each group
    sparse: ``(item indices, counts)`` of the items it holds.

    Recursive halving over the groups: the users of groups ``[lo, hi)`` are split between
    ``[lo, mid)`` and ``[mid, hi)`` by one multivariate hypergeometric draw over the items that still
    hold users there (an item with no user left is dropped: it would only draw zeros). The law is
    that of a chain of draws, one group at a time, as ``pem``'s unsharded path does, but an item
    holding c users takes part in at most ``min(c, r)`` draws per level of the ``ceil(log2 r)``
    levels, not in all ``r``: TreeHist's 64 groups over a Zipf tail cost a few draws per item, not 64.
    """
    out: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0, np.int64), np.empty(0, np.int64))] * len(sizes)
    bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])

    def split(lo: int, hi: int, idx: np.ndarray, held: np.ndarray) -> None:
        if hi - lo == 1:
            out[lo] = (idx.astype(np.int32), held.astype(np.int32)) if narrow else (idx, held)
            return
        mid = (lo + hi) // 2
        if held.size == 0:
            left = held
        else:
            left = hypergeometric_split(held, int(bounds[mid] - bounds[lo]), rng)
        right = held - left
        split(lo, mid, idx[left > 0], left[left > 0])
        split(mid, hi, idx[right > 0], right[right > 0])

    nonzero = np.flatnonzero(counts)
    # A group's items and counts are kept as int32 where they fit (half the memory of a shard's
    # state; the values are the same).
    narrow = counts.size < 2**31 and (counts.size == 0 or int(np.max(counts)) < 2**31)
    split(0, len(sizes), nonzero, np.asarray(counts, dtype=np.int64)[nonzero])
    return out


def build_shard(
    values: np.ndarray, counts: np.ndarray, sizes: np.ndarray, base: Sequence[int], index: int, same: bool
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """A shard's state: its items and each group's sparse histogram (:func:`split_groups`, with the
    shard's own stream; ``same``: every group is every user, ``split: budget``, no draw)."""
    counts = np.asarray(counts, dtype=np.int64)
    if same:
        nonzero = np.flatnonzero(counts)
        return values, [(nonzero, counts[nonzero])]
    return values, split_groups(counts, sizes, stream(base, index))


def users_chunks(values: np.ndarray, counts: np.ndarray, chunk: int = CHUNK_USERS):
    """The users of a histogram (``np.repeat(values, counts)``, in item order) in chunks of at most
    ``chunk`` users, without ever listing them all."""
    cumulative = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    total = int(cumulative[-1])
    for start in range(0, total, chunk):
        stop = min(total, start + chunk)
        lo = int(np.searchsorted(cumulative, start, side="right")) - 1
        hi = int(np.searchsorted(cumulative, stop, side="left"))
        part = counts[lo:hi].copy()
        part[0] -= start - cumulative[lo]
        part[-1] -= cumulative[hi] - stop
        yield np.repeat(values[lo:hi], part)


def shard_round(
    state: tuple[np.ndarray, np.ndarray],
    group: int,
    bits: int,
    length: int,
    candidates: np.ndarray,
    epsilon: float,
    simulation: str,
    base: Sequence[int],
    index: int,
) -> np.ndarray:
    """One round on one shard: the holders of each candidate among the shard's group-``group`` users
    (aggregate) or the support counts of their OLH reports (per-user)."""
    all_values, groups = state
    idx, counts = groups[min(group, len(groups) - 1)]
    values = all_values[idx]
    if simulation != "per-user":
        return olh.holders_of(values, counts, bits, length, candidates)
    rng = stream(base, index, 1 + group)
    shift = np.uint64(bits - length)
    support = np.zeros(candidates.size, dtype=np.int64)
    for users in users_chunks(values, counts):
        seeds, reports = olh.perturb(users >> shift, epsilon, rng)
        support += olh.support_counts(seeds, reports, candidates, epsilon)
    return support


class LocalShards:
    """Shards run one after another in this process."""

    def build(self, fn: Callable[..., Any], args: list[tuple]) -> list[Any]:
        return [fn(*a) for a in args]

    def each(self, fn: Callable[..., Any], states: list[Any], per_shard: list[tuple]) -> list[Any]:
        return [fn(state, *a) for state, a in zip(states, per_shard)]


class DaskShards:
    """Shards as tasks of the Dask cluster this cell runs on; each shard's state stays on a worker."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def build(self, fn: Callable[..., Any], args: list[tuple]) -> list[Any]:
        # Shard j lives on worker j mod W (sorted addresses): its items are scattered there once,
        # its state is built there and every round's task runs there, next to it.
        workers = sorted(self.client.scheduler_info().get("workers", {})) or [None]
        futures = []
        for j, a in enumerate(args):
            where = None if workers[0] is None else [workers[j % len(workers)]]
            values, counts = self.client.scatter([a[0], a[1]], hash=False, workers=where)
            futures.append(self.client.submit(fn, values, counts, *a[2:], pure=False, workers=where))
        return futures

    def each(self, fn: Callable[..., Any], states: list[Any], per_shard: list[tuple]) -> list[Any]:
        futures = [self.client.submit(fn, state, *a, pure=False) for state, a in zip(states, per_shard)]
        return self.client.gather(futures)


@contextmanager
def shard_runner():
    """Dask's when this code runs inside a task of a Dask worker, else the local one."""
    if "distributed" in sys.modules:
        from distributed import get_worker, worker_client

        try:
            get_worker()
        except ValueError:
            pass
        else:
            with worker_client() as client:
                yield DaskShards(client)
            return
    yield LocalShards()


class Shards:
    """A population cut into shards for one run; :meth:`round` gives each round's per-candidate sums."""

    def __init__(
        self,
        runner: LocalShards | DaskShards,
        values: np.ndarray,
        counts: np.ndarray,
        sizes: np.ndarray,
        shards: int,
        rng: np.random.Generator,
    ) -> None:
        self.runner = runner
        # The cell's stream gives the shards' entropy first, then the table: one draw each.
        self.base = [int(x) for x in rng.integers(0, 1 << 63, size=4)]
        starts = shard_starts(counts, shards)
        slices = [slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]
        shard_users = np.array([int(counts[s].sum()) for s in slices], dtype=np.int64)
        n = int(counts.sum())
        same = all(int(x) == n for x in sizes)
        table = np.repeat(shard_users[:, None], len(sizes), axis=1) if same else shard_table(shard_users, sizes, rng)
        self.table = table
        self.states = runner.build(
            build_shard,
            [(values[s], counts[s], table[j], self.base, j, same) for j, s in enumerate(slices)],
        )

    def round(
        self, group: int, bits: int, length: int, candidates: np.ndarray, epsilon: float, simulation: str
    ) -> np.ndarray:
        per_shard = [
            (group, bits, length, candidates, epsilon, simulation, self.base, j) for j in range(len(self.states))
        ]
        parts = self.runner.each(shard_round, self.states, per_shard)
        return np.sum(parts, axis=0, dtype=np.int64) if parts else np.zeros(candidates.size, dtype=np.int64)
