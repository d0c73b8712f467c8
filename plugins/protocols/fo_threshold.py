"""The baseline heavy-hitter method: a frequency oracle over the whole enumerable domain, thresholded
(docs/heavy-hitters.md).

Every user reports their item once with OLH at the full budget (Wang, Blocki, Li & Jha, USENIX
Security 2017, §4.4); the server estimates every item of ``[d]`` and returns the ``k`` largest
estimates above a threshold: the significance threshold (a candidate held by nobody passes it
with probability at most ``beta / d``, Bonferroni over the domain; ``_candidates``), or a given
frequency. This is what a heavy-hitter protocol must beat where the domain can be listed, and it
cannot run where it cannot: its tags declare that it enumerates the domain, so a spec pairing it
with a 64-bit domain is refused at validation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Domain, IdentifiedItems, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.domain import IDENTIFIED_ITEMS

from . import _candidates as olh


class FOThreshold(Protocol):
    """OLH over ``[d]``, top-k above a threshold (see the module docstring)."""

    name = "fo-threshold"
    params = (
        Param("k", int, 32, "how many heavy hitters to identify at most", min=1, max=10**6),
        Param(
            "threshold",
            (float, str),
            "significance",
            "a frequency in [0, 1], or 'significance' (a null item passes with probability beta / d)",
            choices=("significance",),
            min=0,
            max=1,
        ),
        Param("beta", float, 0.05, "family-wise level of the significance threshold", min=1e-12, max=1),
    )

    def tags(self) -> ProtocolTags:
        # Lists every item of [d]: refused on a bit-string domain.
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=True)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, float | str | list[float]]]:
        """One report per user at the full budget."""
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [float(epsilon)]}]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """Its one round reports with OLH at the full budget."""
        return [("round 0", olh.RoundOLH, float(epsilon))]

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItems]:
        if not population.item_domain.is_enumerable:
            raise ValueError(f"fo-threshold enumerates its domain; {population.item_domain.describe()} cannot be")
        n, d = population.n, population.d
        candidates = np.arange(d, dtype=np.uint64)
        if simulation == "per-user":
            seeds, reports = olh.perturb(np.repeat(candidates, population.counts), epsilon, rng)
            started = time.perf_counter()
            support = olh.support_counts(seeds, reports, candidates, epsilon)
        else:
            support = olh.sample_support_counts(population.counts, n, epsilon, rng)
            started = time.perf_counter()
        est = olh.estimate_counts(support, n, epsilon)
        if self.threshold == "significance":
            cut = olh.significance_threshold(n, epsilon, d, self.beta)
        else:
            cut = float(self.threshold) * n
        order = np.lexsort((candidates, -est))[: self.k]
        chosen = order[est[order] > cut]
        server = time.perf_counter() - started
        result = IdentifiedItems(
            items=candidates[chosen],
            frequencies=est[chosen] / n,
            n=n,
            epsilon=float(epsilon),
            k=self.k,
            bits_per_user=float(olh.report_bits(epsilon)),
            server_seconds=server,
            rounds=({"users": n, "epsilon": float(epsilon), "candidates": d, "threshold": cut / n},),
        )
        return {"top-k": result}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(FOThreshold)
