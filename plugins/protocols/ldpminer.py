"""LDPMiner: heavy hitters of set-valued users in two phases (docs/heavy-hitters.md).

Qin, Yang, Yu, Khalil, Xiao & Ren, "Heavy Hitter Estimation over Set-Valued Data with Local
Differential Privacy", ACM CCS 2016. The budget is spent in two phases; the first finds candidate
heavy hitters, the second spends the rest on the candidates only:

1. **candidates**: every user pads their set ``S`` to ``ell`` items with distinct dummies, samples
   one element uniformly and reports it over ``[d + ell)`` with a frequency oracle at ``eps_1``
   (the paper's sampling-then-randomize step; here OLH, whose report does not grow with d, in place
   of the paper's succinct-histogram oracle). The server's estimate of the share of users holding v
   is the padding-and-sampling estimate

       f1(v) = ell * (C_v - N q1*) / (N (p1* - q1*))

   (``C_v`` the reports supporting v, ``(p1*, q1*)`` OLH's at ``eps_1``); the ``candidates`` items
   of largest ``f1`` (``2k`` by default) are the candidate set C.
2. **refinement**: every user cuts their set down to ``S ∩ C`` (members become indices of C), pads
   it to ``ell_2 = min(ell, |C|)``, samples one element and reports it over ``[|C| + ell_2)`` at
   ``eps_2``, with GRR at the amplified budget ``ln(ell_2 (e^eps_2 - 1) + 1)`` or OLH, whichever
   has the smaller variance (``padding_sampling.uses_grr``); the estimate

       f2(v) = ell_2 * (C'_v - N q2*) / (N (p2* - q2*)),   v in C,

   has mean ``ell_2 * mean_i [v in S_i] / max(|S_i ∩ C|, ell_2)``: the share of users holding v
   when no set holds more than ``ell_2`` candidates (then unbiased), less the truncation bias
   ``-(1/N) sum_{i: v in S_i, |S_i ∩ C| > ell_2} (1 - ell_2 / |S_i ∩ C|)`` otherwise, and variance
   ``ell_2^2 sum_i r_iv (1 - r_iv) / (N (p2* - q2*))^2`` (``padding_sampling.psfo_moments`` on the
   restricted sets).

The result is the top k of phase 2 by ``f2`` (``identified-items``). How the budget is shared,
``split``: ``budget`` (the paper's) has every user report in both phases, at ``eps_1 = share * eps``
and ``eps_2 = eps - eps_1`` (sequential composition: eps-LDP in all), ``share = 1/2``; ``users``
sends ``share`` of the users (uniformly at random) to phase 1 and the rest to phase 2, each
reporting once at eps (the alternative SVSM argues for; a group is a uniform sample, so its shares
estimate the population's). Both paths: per-user (every report drawn) and aggregate (every user's
sample drawn, then the oracle's exact count draw from the samples' histogram; OLH exact under the
ideal hash), as ``padding_sampling``.
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


class LDPMiner(Protocol):
    """LDPMiner's two phases (Qin et al., CCS 2016; see the module docstring)."""

    name = "ldpminer"
    params = (
        Param("k", int, 32, "how many heavy hitters to identify", min=1, max=4096),
        Param("ell", int, 4, "the padding length of both phases (phase 2: at most the candidates)", min=1, max=10**4),
        Param("candidates", int, 0, "candidates phase 1 keeps (0: 2k)", min=0, max=10**5),
        Param(
            "split",
            str,
            "budget",
            "budget: every user reports in both phases (eps split, the paper's); users: disjoint groups at eps",
            choices=("budget", "users"),
        ),
        Param(
            "share",
            float,
            0.5,
            "phase 1's share of the budget (split: budget) or of the users (users)",
            min=0.01,
            max=0.99,
        ),
        Param(
            "oracle",
            str,
            "auto",
            "phase 2's frequency oracle: grr (amplified budget), olh, or auto (the smaller variance)",
            choices=("auto", "grr", "olh"),
        ),
    )

    def tags(self) -> ProtocolTags:
        # Phase 1 lists [d] (and ell dummies): an enumerable domain only. Users hold sets (or items).
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=True, records=("set", "item"))

    def phase_budgets(self, epsilon: float) -> tuple[float, float]:
        """``(eps_1, eps_2)``: the budget of each phase's report."""
        e = float(epsilon)
        if self.split == "users":
            return e, e
        e1 = self.share * e
        return e1, e - e1

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``split: budget``: one group, ``[eps_1, eps_2]`` adding up to eps; ``split: users``: two
        disjoint groups, each spending eps in its own phase (phase 2's GRR at the amplified budget
        is eps_2-LDP after sampling: ``padding_sampling``)."""
        e = float(epsilon)
        if self.split == "users":
            return [
                {"group": "candidate-phase users", "model": "local", "epsilon": e, "per_round": [e, 0.0]},
                {"group": "refinement-phase users", "model": "local", "epsilon": e, "per_round": [0.0, e]},
            ]
        e1, e2 = self.phase_budgets(e)
        return [{"group": "all users", "model": "local", "epsilon": e, "per_round": [e1, e2]}]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """OLH at eps_1 in phase 1 (and at eps_2 in phase 2 with ``oracle: olh``); phase 2's GRR at
        the amplified budget is eps_2-LDP only with the sampling before it, checked exactly by
        tests/unit/plugins/protocols/test_padding_sampling.py, not by an item oracle's audit."""
        e1, e2 = self.phase_budgets(epsilon)
        rounds = [("round 0", olh.RoundOLH, e1)]
        if self.oracle == "olh":
            rounds.append(("round 1", olh.RoundOLH, e2))
        return rounds

    def candidate_count(self, d: int) -> int:
        """|C|: ``candidates`` (2k when 0), at most d."""
        return min(self.candidates or 2 * self.k, d)

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItems]:
        if not population.item_domain.is_enumerable:
            raise ValueError(f"ldpminer enumerates its domain; {population.item_domain.describe()} cannot be")
        offsets, members = ps.as_sets(population)
        n, d, ell = population.n, population.d, self.ell
        e1, e2 = self.phase_budgets(epsilon)
        if self.split == "users":
            n1 = int(self.share * n)
            order = rng.permutation(n)
            (o1, m1), (o2, m2) = (ps.take_users(offsets, members, u) for u in (order[:n1], order[n1:]))
        else:
            n1 = n
            (o1, m1), (o2, m2) = (offsets, members), (offsets, members)
        n2 = o2.size - 1
        server = 0.0

        # Phase 1: padding-and-sampling with ell over [d], OLH at eps_1; the top |C| are the candidates.
        sampled = ps.sample_padded(o1, m1, ell, d, rng)
        started = time.perf_counter()
        support = ps.support_counts(sampled, "olh", d, ell, e1, rng, simulation)
        p1, q1 = olh.olh_probabilities(e1)
        est1 = ps.psfo_estimate(support, n1, ell, p1, q1)
        positions = np.arange(d, dtype=np.int64)
        cand = positions[np.lexsort((positions, -est1))[: self.candidate_count(d)]]
        lookup = np.full(d, -1, dtype=np.int64)
        lookup[cand] = np.arange(cand.size)
        server += time.perf_counter() - started

        # Phase 2: the sets cut to the candidates, padded to ell_2, the cheaper oracle at eps_2.
        o2c, m2c = ps.restrict(o2, m2, lookup)
        ell2 = min(ell, int(cand.size))
        c = int(cand.size)
        oracle = self.oracle if self.oracle != "auto" else ("grr" if ps.uses_grr(c, ell2, e2) else "olh")
        p2, q2 = ps.oracle_probabilities(oracle, c, ell2, e2)
        sampled2 = ps.sample_padded(o2c, m2c, ell2, c, rng)
        started = time.perf_counter()
        support2 = ps.support_counts(sampled2, oracle, c, ell2, e2, rng, simulation)
        est2 = ps.psfo_estimate(support2, n2, ell2, p2, q2)
        top = np.lexsort((cand, -est2))[: self.k]
        server += time.perf_counter() - started

        bits1 = olh.report_bits(e1)
        bits2 = olh.report_bits(e2) if oracle == "olh" else int(np.ceil(np.log2(c + ell2)))
        bits = (n1 * bits1 + n2 * bits2) / max(n, 1)
        rounds = (
            {"phase": "candidates", "users": n1, "epsilon": e1, "candidates": d, "ell": ell, "oracle": "olh"},
            {
                "phase": "refinement",
                "users": n2,
                "epsilon": e2,
                "candidates": c,
                "ell": ell2,
                "oracle": oracle,
                "oracle_epsilon": ps.amplified_epsilon(e2, ell2) if oracle == "grr" else e2,
            },
        )
        result = IdentifiedItems(
            items=population.items[cand[top]],
            frequencies=est2[top],
            n=n,
            epsilon=float(epsilon),
            k=self.k,
            mechanism=self.name,
            bits_per_user=float(bits),
            server_seconds=server,
            rounds=rounds,
        )
        return {"top-k": result}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(LDPMiner)
