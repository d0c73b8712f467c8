"""SVSM, items then itemsets: the frequent itemsets of set-valued users (docs/heavy-hitters.md).

Wang, Li & Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018, §VI
(SVSM: SVIM for the items, then the itemsets built from them); reference code vvv214/LDP_Protocols,
folder ``svsm/`` (``svsm.py``, ``find_itemset``). The users are split uniformly at random:

1. **items** (``item_share`` of the users, 40% in the reference code): SVIM (the ``svsm``
   protocol, its three phases inside this group) identifies the top k items I with estimated
   shares ``f_1 >= ... >= f_k``;
2. **candidate itemsets** (no users): each identified item gets the guess ``a_j = 0.9 f_j / f_1``
   (negative estimates count 0); an itemset X ⊆ I of two items or more is guessed to be held by a
   share ``prod_{j in X} a_j`` (as if the items were independent), and the ``candidates`` (default
   k, the reference's) itemsets of largest guess form the candidate set IS (exact top by the
   product: a superset's product is smaller, so the search extends only itemsets above the current
   threshold);
3. **itemset sizes** (``size_share`` of the other users, 20%): each user reports how many
   candidates their set contains, ``|{X in IS : X ⊆ S}|`` (0 .. |IS|), with OLH at eps; the padding
   length ``ell`` is the smallest size whose estimated cumulative share of the users with at least
   one candidate exceeds ``percentile`` (90%), at most ``max_ell`` (30);
4. **itemset estimates** (the rest): each user's set of contained candidates is padded to ``ell``
   and sampled (padding-and-sampling over ``[|IS| + ell)``, GRR at the amplified budget or OLH,
   the paper's variance rule), and

       f(X) = ell (C_X - N q*) / (N (p* - q*))

   estimates the share of users holding X, unbiased when no user holds more than ``ell``
   candidates, otherwise biased by ``-(1/N) sum_{i: X ⊆ S_i, h_i > ell} (1 - ell / h_i)``
   (``h_i`` the candidates user i holds: ``padding_sampling``'s truncation bias over the candidate
   itemsets); ``correction: percentile`` divides it by ``percentile`` as the reference code does.

The result is the top k of the identified items (as singletons, with SVIM's estimates) and the
candidate itemsets (with ``f``) together, by estimate (``identified-itemsets``, label
``top-k``). Every user reports once at eps (five disjoint groups). Both paths as ``svsm``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Domain, IdentifiedItemsets, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.domain import IDENTIFIED_ITEMSETS
from ldpbench.types.itemsets import popcount, user_masks

from . import _candidates as olh
from . import padding_sampling as ps
from .svsm import SVSM, percentile_length

#: Candidate itemsets kept per level of the search (a bound for heavily tied guesses).
MAX_LEVEL = 4096


def candidate_itemsets(guess: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` itemsets of two items or more over ``len(guess)`` items (uint64 bit masks,
    bit j = item j) with the largest positive product of ``guess`` (ties: the smaller mask), and
    their products, largest first. Items are extended in index order from each itemset's highest
    bit, only from itemsets whose product is above the ``count``-th largest found so far."""
    a = np.clip(np.asarray(guess, dtype=float), 0.0, None)
    k = a.size
    singles = np.uint64(1) << np.arange(k, dtype=np.uint64)
    frontier, products, top = singles, a, np.arange(k)
    pool_masks: list[np.ndarray] = []
    pool_products: list[np.ndarray] = []
    threshold = 0.0
    while frontier.size:
        rows, cols = np.nonzero(np.arange(k)[None, :] > top[:, None])
        masks = frontier[rows] | singles[cols]
        prods = products[rows] * a[cols]
        keep = (prods > 0) & (prods >= threshold)
        frontier, products, top = masks[keep], prods[keep], cols[keep]
        if frontier.size > MAX_LEVEL:
            best = np.lexsort((frontier, -products))[:MAX_LEVEL]
            frontier, products, top = frontier[best], products[best], top[best]
        pool_masks.append(frontier)
        pool_products.append(products)
        found = np.concatenate(pool_products)
        if found.size >= count:
            threshold = max(threshold, float(np.sort(found)[::-1][count - 1]))
            keep = products >= threshold
            frontier, products, top = frontier[keep], products[keep], top[keep]
    masks = np.concatenate(pool_masks) if pool_masks else np.zeros(0, np.uint64)
    prods = np.concatenate(pool_products) if pool_products else np.zeros(0)
    best = np.lexsort((masks, -prods))[:count]
    return masks[best], prods[best]


def held_candidates(
    offsets: np.ndarray, members: np.ndarray, item_positions: np.ndarray, candidates: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's contained candidates as a CSR pair (candidate indices): a user's set becomes a
    mask over the identified items (``item_positions[j]`` is bit j), the distinct masks are tested
    against every candidate once, and the users take their mask's list."""
    bits = np.zeros(d, dtype=np.uint64)
    bits[np.asarray(item_positions, dtype=np.int64)] = np.uint64(1) << np.arange(len(item_positions), dtype=np.uint64)
    masks = user_masks(offsets, members, bits)
    unique, inverse = np.unique(masks, return_inverse=True)
    held = (unique[:, None] & candidates[None, :]) == candidates[None, :]
    u_rows, u_cols = np.nonzero(held)
    u_offsets = np.concatenate([[0], np.cumsum(np.bincount(u_rows, minlength=unique.size))]).astype(np.int64)
    return ps.take_users(u_offsets, u_cols.astype(np.int64), inverse.ravel())


class SVSMItemsets(Protocol):
    """SVSM's frequent itemset mining (Wang, Li & Jha, S&P 2018, §VI; module docstring)."""

    name = "svsm-itemsets"
    params = (
        Param("k", int, 32, "how many frequent itemsets (and items, in the item phase) to identify", min=1, max=64),
        Param("item_share", float, 0.4, "share of users in the item phases (SVIM)", min=0.02, max=0.98),
        Param("size_share", float, 0.2, "share of the other users in the itemset-size phase", min=0.01, max=0.98),
        Param("candidates", int, 0, "candidate itemsets (0: k, the reference's)", min=0, max=4096),
        Param("percentile", float, 0.9, "the padding length is this percentile of the sizes", min=0.01, max=1),
        Param("max_ell", int, 30, "the largest padding length", min=1, max=1000),
        Param(
            "correction",
            str,
            "percentile",
            "percentile: divide the estimates by the percentile (the reference code); none: the padded estimate",
            choices=("percentile", "none"),
        ),
        Param(
            "oracle",
            str,
            "auto",
            "the estimate phases' frequency oracle: grr (amplified budget), olh, or auto (the paper's choice)",
            choices=("auto", "grr", "olh"),
        ),
    )

    def tags(self) -> ProtocolTags:
        # SVIM lists [d]: an enumerable domain only. Users hold sets (or single items).
        return ProtocolTags(result=IDENTIFIED_ITEMSETS, enumerates_domain=True, records=("set", "item"))

    def _svim(self) -> SVSM:
        return SVSM(
            k=self.k,
            percentile=self.percentile,
            max_ell=self.max_ell,
            correction=self.correction,
            oracle=self.oracle,
        )

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Five disjoint groups (SVIM's three, the itemset sizes, the itemset estimates), each
        reporting once at eps in its own phase."""
        e = float(epsilon)
        names = (
            "item-candidate users",
            "item-size users",
            "item-estimate users",
            "itemset-size users",
            "itemset-estimate users",
        )
        return [
            {"group": g, "model": "local", "epsilon": e, "per_round": [e if j == i else 0.0 for j in range(5)]}
            for i, g in enumerate(names)
        ]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """OLH at eps in rounds 0, 1 and 3 (and the estimate rounds 2, 4 with ``oracle: olh``); the
        estimate rounds' GRR at the amplified budget is eps-LDP only after sampling (checked by
        tests/unit/plugins/protocols/test_padding_sampling.py)."""
        rounds = "rounds 0-4" if self.oracle == "olh" else "rounds 0, 1, 3"
        return [(rounds, olh.RoundOLH, float(epsilon))]

    def group_sizes(self, n: int) -> tuple[int, int, int]:
        """Users of the item phases, the itemset-size phase and the itemset-estimate phase."""
        n_items = int(self.item_share * n)
        n_sizes = int(self.size_share * (n - n_items))
        return n_items, n_sizes, n - n_items - n_sizes

    def estimate_candidates(
        self,
        offsets: np.ndarray,
        members: np.ndarray,
        item_positions: np.ndarray,
        candidates: np.ndarray,
        d: int,
        ell: int,
        epsilon: float,
        rng: np.random.Generator,
        simulation: str,
    ) -> tuple[np.ndarray, str]:
        """The last phase: the users' contained candidates padded to ``ell`` and sampled, reported
        with the oracle the rule picks; the estimate of each candidate (divided by ``percentile``
        with ``correction: percentile``) and the oracle's name."""
        m = int(candidates.size)
        oc, mc = held_candidates(offsets, members, item_positions, candidates, d)
        oracle = self.oracle if self.oracle != "auto" else ("grr" if ps.uses_grr(max(m, 1), ell, epsilon) else "olh")
        sampled = ps.sample_padded(oc, mc, ell, m, rng)
        if m == 0:
            return np.zeros(0), oracle
        p, q = ps.oracle_probabilities(oracle, m, ell, epsilon)
        support = ps.support_counts(sampled, oracle, m, ell, epsilon, rng, simulation)
        est = ps.psfo_estimate(support, oc.size - 1, ell, p, q)
        return (est / self.percentile if self.correction == "percentile" else est), oracle

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItemsets]:
        if not population.item_domain.is_enumerable:
            raise ValueError(f"svsm-itemsets enumerates its domain; {population.item_domain.describe()} cannot be")
        offsets, members = ps.as_sets(population)
        n, d, e = population.n, population.d, float(epsilon)
        sizes = self.group_sizes(n)
        order = rng.permutation(n)
        groups = [ps.take_users(offsets, members, u) for u in np.split(order, np.cumsum(sizes)[:-1])]

        # Items: SVIM inside the first group (a uniform sample: its shares estimate the population's).
        o1, m1 = groups[0]
        items_result = self._svim().run(Population.from_sets(o1, m1, d), e, rng, simulation=simulation)["top-k"]
        item_positions = np.asarray(items_result.items, dtype=np.int64)
        item_freq = np.asarray(items_result.frequencies, dtype=float)
        server = float(items_result.server_seconds)

        # Candidate itemsets from the items' estimates (no users).
        started = time.perf_counter()
        top = float(item_freq.max()) if item_freq.size else 0.0
        guess = 0.9 * item_freq / top if top > 0 else np.zeros(item_freq.size)
        count = self.candidates or self.k
        cand, _ = candidate_itemsets(guess, count)
        m = int(cand.size)
        server += time.perf_counter() - started

        # Itemset sizes: each user's number of contained candidates, 0 .. m, with OLH.
        (o2, m2), n2 = groups[1], sizes[1]
        held2 = np.diff(held_candidates(o2, m2, item_positions, cand, d)[0])
        started = time.perf_counter()
        size_support = SVSM._olh_counts(held2, m + 1, e, rng, simulation)
        ell = percentile_length(olh.estimate_counts(size_support, n2, e), self.percentile, self.max_ell)
        server += time.perf_counter() - started

        # Itemset estimates: padding-and-sampling over the candidates with that ell.
        (o3, m3), n3 = groups[2], sizes[2]
        started = time.perf_counter()
        est, oracle = self.estimate_candidates(o3, m3, item_positions, cand, d, ell, e, rng, simulation)

        # The top k of items (as singletons) and itemsets together.
        singles = np.uint64(1) << np.arange(item_positions.size, dtype=np.uint64)
        masks = np.concatenate([singles, cand])
        values = np.concatenate([item_freq, est])
        best = np.lexsort((popcount(masks), -values))[: self.k]
        chosen = masks[best]
        bitmatrix = (chosen[:, None] >> np.arange(item_positions.size, dtype=np.uint64)[None, :]) & np.uint64(1)
        rows, cols = np.nonzero(bitmatrix)
        table = population.items[item_positions[cols]]
        table = table[np.lexsort((table, rows))]
        table_offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=chosen.size))]).astype(np.int64)
        server += time.perf_counter() - started

        bits_size = olh.report_bits(e)
        bits_est = olh.report_bits(e) if oracle == "olh" else int(np.ceil(np.log2(m + ell)))
        bits = (items_result.bits_per_user * sizes[0] + bits_size * n2 + bits_est * n3) / max(n, 1)
        rounds = tuple(items_result.rounds) + (
            {"phase": "itemset size", "users": n2, "epsilon": e, "candidates": m + 1},
            {
                "phase": "itemset estimates",
                "users": n3,
                "epsilon": e,
                "candidates": m,
                "ell": ell,
                "oracle": oracle,
                "oracle_epsilon": ps.amplified_epsilon(e, ell) if oracle == "grr" else e,
            },
        )
        result = IdentifiedItemsets(
            items=np.arange(chosen.size, dtype=np.uint64),
            frequencies=values[best].astype(float),
            n=n,
            epsilon=e,
            k=self.k,
            mechanism=self.name,
            bits_per_user=float(bits),
            server_seconds=server,
            rounds=rounds,
            itemset_offsets=table_offsets,
            itemset_members=table.astype(np.uint64),
        )
        return {"top-k": result}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(SVSMItemsets)
