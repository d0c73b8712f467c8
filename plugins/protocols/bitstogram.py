"""Bitstogram (Bassily, Nissim, Stemmer & Thakurta, "Practical Locally Private Heavy Hitters",
NeurIPS 2017, the Bitstogram algorithm; docs/heavy-hitters.md): hash the items into buckets, learn
the heavy item of every bucket bit by bit, then estimate the reconstructed items.

Items are ``b``-bit strings (never enumerated). Public hash functions ``h_r: {0,1}^b -> [T]``,
``r < R`` (``T = buckets``, ``R = repetitions``). The users are split uniformly at random into an
estimation group (a share ``estimate_share`` of them) and ``R b`` bit groups of equal size (±1);
every user reports once, at the full budget epsilon:

- a user of bit group (r, j) holding v reports the cell ``2 h_r(v) + v_j`` (``v_j`` the j-th bit,
  most significant first) of ``[2T]`` with the frequency oracle; the server estimates all 2T cells
  and sets bit j of bucket t's item to ``argmax_b f^(t, b)`` (ties: 0). This gives R T
  reconstructed items ``v^_{r,t}``: where one item holds most of bucket t's users, it is that item
  (the paper's Lemma: with ``f^`` within ``O(sqrt(n R b log(1/beta)) / epsilon)`` of the truth,
  every bit of an item heavier than that is right);
- the estimation group reports its item with the frequency oracle over the (distinct)
  reconstructed items; the ``k`` largest positive estimates are the result, each the group's
  frequency (an unbiased estimate of the population's: the group is a uniform sample).

The frequency oracle is OLH over the candidates (``_candidates``: Wang, Blocki, Li & Jha, USENIX
Security 2017, §4.4), the round oracle of PEM and TreeHist, with its per-user path and its
aggregate path, exact in distribution under an ideal hash family (``_candidates``'s docstring; the
bucket hashes ``h_r`` are fixed public functions, ``hash_seed``).

**Departures from the paper**: OLH instead of the paper's Hashtogram as the frequency oracle (as
``treehist``); no error-correcting code (the paper's analysis encodes items with a code so that a
few wrong bits are corrected; a wrong bit here loses the item); users are split between the bit
groups and the estimation group (the paper's algorithm partitions the users the same way);
``repetitions`` independent bucket hashes give an item colliding with a heavier one in one
repetition another chance (the paper boosts its success probability by repetitions); the result
is the top k rather than every item above the paper's threshold.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Domain, IdentifiedItems, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.domain import IDENTIFIED_ITEMS
from ldpbench_plugins.oracles import _hashing

from . import _candidates as olh
from .pem import PEM, domain_bits, top

#: The bucket hashes' seed base (public, fixed): ``h_r = H_{BUCKET_SEED + hash_seed + r}``.
BUCKET_SEED = 0xB175_7061_0000_0000


def bucket_of(values: np.ndarray, buckets: int, repetition: int, seed: int = 0) -> np.ndarray:
    """``h_r(v)`` in ``[0, buckets)`` for uint64 items (int64)."""
    s = np.uint64((BUCKET_SEED + int(seed) + int(repetition)) % (1 << 64))
    keys = olh.item_keys(values)
    return _hashing.hash_pairs(np.full(keys.size, s, dtype=np.uint64), keys, buckets)


def cells(values: np.ndarray, buckets: int, repetition: int, bit: int, bits: int, seed: int = 0) -> np.ndarray:
    """The cell ``2 h_r(v) + v_j`` a holder of v reports in bit group (r, j) (uint64)."""
    v = np.asarray(values, dtype=np.uint64)
    b = (v >> np.uint64(bits - 1 - bit)) & np.uint64(1)
    return (bucket_of(v, buckets, repetition, seed).astype(np.uint64) << np.uint64(1)) | b


class Bitstogram(Protocol):
    """Bitstogram over OLH (see the module docstring)."""

    name = "bitstogram"
    params = (
        Param("k", int, 32, "how many heavy hitters to return at most", min=1, max=4096),
        Param(
            "buckets",
            int,
            256,
            "T, the buckets each repetition hashes items into (candidates: R T)",
            min=1,
            max=1 << 14,
        ),
        Param("repetitions", int, 1, "R, independent bucket hashes (each with its own b bit groups)", min=1, max=16),
        Param("estimate_share", float, 0.2, "the share of users in the estimation group", min=0.01, max=0.99),
        Param("hash_seed", int, 0, "seed of the public bucket hashes", min=0),
    )

    def tags(self) -> ProtocolTags:
        # Lists 2T cells per bit group and R T reconstructed items, never the domain.
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=False)

    def group_sizes(self, n: int, bits: int) -> np.ndarray:
        """Sizes of the R b bit groups (equal, ±1), then of the estimation group."""
        estimate = int(round(self.estimate_share * n))
        return np.append(olh.split_users(n - estimate, self.repetitions * bits), estimate)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Each user reports once at epsilon: a bit-group user in round 0 (the bits), an
        estimation-group user in round 1 (the candidates)."""
        e = float(epsilon)
        return [
            {"group": "bit groups (round 0)", "model": "local", "epsilon": e, "per_round": [e, 0.0]},
            {"group": "estimation group (round 1)", "model": "local", "epsilon": e, "per_round": [0.0, e]},
        ]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """Both rounds report with OLH over their candidates at the full budget."""
        return [("rounds 0-1", olh.RoundOLH, float(epsilon))]

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItems]:
        bits = domain_bits(population.item_domain)
        n, values, counts = population.n, population.items.astype(np.uint64), population.counts
        T, R = self.buckets, self.repetitions
        sizes = self.group_sizes(n, bits)
        if simulation == "per-user":
            groups = PEM._users_per_round(values, counts, sizes, rng)
        else:
            groups = PEM._counts_per_round(counts, sizes, rng)
        all_cells = np.arange(2 * T, dtype=np.uint64)
        server = 0.0
        found = np.zeros((R, T), dtype=np.uint64)
        for r in range(R):
            for j in range(bits):
                g = r * bits + j
                users = int(sizes[g])
                if simulation == "per-user":
                    seeds, reports = olh.perturb(cells(groups[g], T, r, j, bits, self.hash_seed), epsilon, rng)
                    started = time.perf_counter()
                    support = olh.support_counts(seeds, reports, all_cells, epsilon)
                else:
                    held = np.bincount(
                        cells(values, T, r, j, bits, self.hash_seed).astype(np.int64),
                        weights=groups[g],
                        minlength=2 * T,
                    ).astype(np.int64)
                    support = olh.sample_support_counts(held, users, epsilon, rng)
                    started = time.perf_counter()
                est = olh.estimate_counts(support, users, epsilon).reshape(T, 2)
                found[r] |= (est[:, 1] > est[:, 0]).astype(np.uint64) << np.uint64(bits - 1 - j)
                server += time.perf_counter() - started
        started = time.perf_counter()
        candidates = np.unique(found)
        server += time.perf_counter() - started
        users = int(sizes[-1])
        if simulation == "per-user":
            seeds, reports = olh.perturb(groups[-1], epsilon, rng)
            started = time.perf_counter()
            support = olh.support_counts(seeds, reports, candidates, epsilon)
        else:
            holders = olh.holders_of(values, groups[-1], bits, bits, candidates)
            support = olh.sample_support_counts(holders, users, epsilon, rng)
            started = time.perf_counter()
        est = olh.estimate_counts(support, users, epsilon) / max(users, 1)
        items, freqs = top(candidates, est, self.k)
        positive = freqs > 0
        server += time.perf_counter() - started
        result = IdentifiedItems(
            items=items[positive],
            frequencies=freqs[positive],
            n=n,
            epsilon=float(epsilon),
            k=self.k,
            bits_per_user=float(olh.report_bits(epsilon)),
            server_seconds=server,
            rounds=(
                {
                    "round": "bits",
                    "users": int(sizes[:-1].sum()),
                    "epsilon": float(epsilon),
                    "candidates": 2 * T * R * bits,
                },
                {"round": "estimation", "users": users, "epsilon": float(epsilon), "candidates": int(candidates.size)},
            ),
        )
        return {"top-k": result}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(Bitstogram)
