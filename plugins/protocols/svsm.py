"""SVSM's item mining (SVIM): the frequent items of set-valued users (docs/heavy-hitters.md).

Wang, Li & Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018, §V
(SVIM, the item-mining part of SVSM); reference code vvv214/LDP_Protocols, folder ``svsm/``.
The users are split uniformly at random into three groups, each reporting once at the full budget:

1. **candidates** (``find_share`` of the users, 40% in the reference code): padding-and-sampling
   with ``ell = 1`` (each user samples one item of their set), OLH over ``[d]``; the ``2k`` items
   of largest estimate are the candidates C;
2. **set size** (``size_share``, 10%): each user reports ``|S ∩ C|`` (0 .. 2k) with OLH; from the
   estimated distribution of the sizes 1 .. 2k, ``ell`` is the smallest size whose cumulative share
   exceeds ``percentile`` (90%), at most ``max_ell`` (30, the reference's cap);
3. **estimates** (the rest): padding-and-sampling (``padding_sampling``) over C with that ``ell``,
   GRR at the amplified budget or OLH as the paper chooses; each estimate ``ell (C_v - N q*) /
   (N (p* - q*))``, divided by ``percentile`` (``correction: percentile``, the reference code's
   compensation for the sets longer than ``ell``, whose items the sampling under-counts;
   ``correction: none`` leaves the padded estimate, biased as ``padding_sampling`` states).

The result is the top k of the last phase (``identified-items``). Items are histogram positions
of an enumerable domain (phase 1 lists ``[d]``); a one-item-per-user population is the special case
of singleton sets. Itemset mining (SVSM's second half) is the ``svsm-itemsets`` protocol
(``svsm_itemsets``), which runs this one on its item group.
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

from . import _candidates as olh
from . import padding_sampling as ps


def percentile_length(sizes_estimate: np.ndarray, percentile: float, max_ell: int) -> int:
    """The smallest ``l >= 1`` with ``sum_{j=1..l} L_j / sum_{j>=1} L_j > percentile`` (``L_j`` the
    estimated number of users with j candidates), at most ``max_ell`` (and at most the largest
    size); 1 when the estimated total is not positive."""
    tail = np.asarray(sizes_estimate, dtype=float)[1:]
    total = tail.sum()
    if tail.size == 0 or total <= 0:
        return 1
    above = np.nonzero(np.cumsum(tail) / total > percentile)[0]
    ell = int(above[0]) + 1 if above.size else tail.size
    return max(1, min(ell, max_ell))


class SVSM(Protocol):
    """SVIM, the item mining of SVSM (Wang, Li & Jha, S&P 2018; see the module docstring)."""

    name = "svsm"
    params = (
        Param("k", int, 32, "how many frequent items to identify", min=1, max=4096),
        Param("find_share", float, 0.4, "share of users in the candidate phase", min=0.01, max=0.98),
        Param("size_share", float, 0.1, "share of users in the set-size phase", min=0.01, max=0.98),
        Param("percentile", float, 0.9, "the padding length is this percentile of the set sizes", min=0.01, max=1),
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
            "the third phase's frequency oracle: grr (amplified budget), olh, or auto (the paper's choice)",
            choices=("auto", "grr", "olh"),
        ),
    )

    def tags(self) -> ProtocolTags:
        # Phase 1 lists [d]: an enumerable domain only. Users hold sets (or single items).
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=True, records=("set", "item"))

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Three disjoint groups, each reporting once at eps in its phase (the third's GRR at the
        amplified budget is eps-LDP after sampling: ``padding_sampling``)."""
        e = float(epsilon)
        names = ("candidate-phase users", "set-size-phase users", "estimation-phase users")
        return [
            {"group": g, "model": "local", "epsilon": e, "per_round": [e if j == i else 0.0 for j in range(3)]}
            for i, g in enumerate(names)
        ]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """OLH at eps in phases 1 and 2 (and 3 with ``oracle: olh``); phase 3's GRR at the
        amplified budget is eps-LDP only with the sampling before it, checked exactly by
        tests/unit/plugins/protocols/test_padding_sampling.py, not by an item oracle's audit."""
        rounds = "rounds 0-2" if self.oracle == "olh" else "rounds 0-1"
        return [(rounds, olh.RoundOLH, float(epsilon))]

    def group_sizes(self, n: int) -> tuple[int, int, int]:
        """Users of the three phases (the third takes the rest)."""
        n1 = int(self.find_share * n)
        n2 = int(self.size_share * n)
        if n1 + n2 > n:
            n2 = n - n1
        return n1, n2, n - n1 - n2

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItems]:
        if not population.item_domain.is_enumerable:
            raise ValueError(f"svsm enumerates its domain; {population.item_domain.describe()} cannot be")
        offsets, members = ps.as_sets(population)
        n, d = population.n, population.d
        sizes = self.group_sizes(n)
        order = rng.permutation(n)
        cuts = np.cumsum(sizes)[:-1]
        groups = [ps.take_users(offsets, members, users) for users in np.split(order, cuts)]
        server = 0.0

        # Phase 1: sample one item (ell = 1), OLH over [d]; the top 2k are the candidates.
        (o1, m1), n1 = groups[0], sizes[0]
        sampled = ps.sample_padded(o1, m1, 1, d, rng)
        started = time.perf_counter()
        support = ps.support_counts(sampled, "olh", d, 1, epsilon, rng, simulation)
        p, q = olh.olh_probabilities(epsilon)
        est1 = ps.psfo_estimate(support, n1, 1, p, q)
        positions = np.arange(d, dtype=np.int64)
        cand = positions[np.lexsort((positions, -est1))[: min(2 * self.k, d)]]
        lookup = np.full(d, -1, dtype=np.int64)
        lookup[cand] = np.arange(cand.size)
        server += time.perf_counter() - started

        # Phase 2: each user's number of candidates held, 0 .. |C|, with OLH.
        (o2, m2), n2 = groups[1], sizes[1]
        held = np.diff(ps.restrict(o2, m2, lookup)[0])
        started = time.perf_counter()
        size_support = self._olh_counts(held, cand.size + 1, epsilon, rng, simulation)
        size_est = olh.estimate_counts(size_support, n2, epsilon)
        ell = percentile_length(size_est, self.percentile, self.max_ell)
        server += time.perf_counter() - started

        # Phase 3: padding-and-sampling over the candidates with that ell.
        (o3, m3), n3 = groups[2], sizes[2]
        o3c, m3c = ps.restrict(o3, m3, lookup)
        oracle = self.oracle if self.oracle != "auto" else ("grr" if ps.uses_grr(cand.size, ell, epsilon) else "olh")
        p3, q3 = ps.oracle_probabilities(oracle, cand.size, ell, epsilon)
        sampled3 = ps.sample_padded(o3c, m3c, ell, cand.size, rng)
        started = time.perf_counter()
        support3 = ps.support_counts(sampled3, oracle, cand.size, ell, epsilon, rng, simulation)
        est3 = ps.psfo_estimate(support3, n3, ell, p3, q3)
        if self.correction == "percentile":
            est3 = est3 / self.percentile
        top = np.lexsort((cand, -est3))[: self.k]
        server += time.perf_counter() - started

        bits1 = olh.report_bits(epsilon)
        bits3 = olh.report_bits(epsilon) if oracle == "olh" else int(np.ceil(np.log2(cand.size + ell)))
        bits = (n1 * bits1 + n2 * bits1 + n3 * bits3) / max(n, 1)
        e = float(epsilon)
        rounds = (
            {"phase": "candidates", "users": n1, "epsilon": e, "candidates": d},
            {"phase": "set size", "users": n2, "epsilon": e, "candidates": int(cand.size) + 1},
            {
                "phase": "estimates",
                "users": n3,
                "epsilon": e,
                "candidates": int(cand.size),
                "ell": ell,
                "oracle": oracle,
                "oracle_epsilon": ps.amplified_epsilon(epsilon, ell) if oracle == "grr" else e,
            },
        )
        result = IdentifiedItems(
            items=population.items[cand[top]],
            frequencies=est3[top],
            n=n,
            epsilon=e,
            k=self.k,
            mechanism=self.name,
            bits_per_user=float(bits),
            server_seconds=server,
            rounds=rounds,
        )
        return {"top-k": result}

    @staticmethod
    def _olh_counts(
        values: np.ndarray, size: int, epsilon: float, rng: np.random.Generator, simulation: str
    ) -> np.ndarray:
        """OLH support counts of every value of ``[size]`` from users holding ``values``."""
        if simulation == "per-user":
            seeds, reports = olh.perturb(values.astype(np.uint64), epsilon, rng)
            return olh.support_counts(seeds, reports, np.arange(size, dtype=np.uint64), epsilon)
        return olh.sample_support_counts(np.bincount(values, minlength=size), values.size, epsilon, rng)


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(SVSM)
