"""The naive longitudinal baseline (docs/longitudinal.md): every round, every user sends a fresh
frequency-oracle report of their current value at the spec's ``epsilon``; nothing is memoized.

It is the baseline that shows why memoization exists (Erlingsson, Pihur & Korolova, CCS 2014,
§1 and §3; Arcolezi et al., EDBT 2023, §1): each round's estimate is the oracle's own (GRR:
Kairouz, Bonawitz & Ramage, ICML 2016; OUE: Wang, Blocki, Li & Jha, USENIX Security 2017, §4.4),
but T reports of one unchanged value are only ``T * epsilon``-LDP, with no bound as T grows (an
averaging adversary recovers the value: ``ldpbench.audit.averaging``). In the two-layer notation of
``_longitudinal`` it is the chain whose permanent layer is the identity (``p1 = 1``, ``q1 = 0``),
which the same per-round estimator, variance and both simulation paths serve unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Population, Protocol, ProtocolTags
from ldpbench.types.domain import FREQUENCIES

from . import _longitudinal as lg


class NaiveRounds(Protocol):
    """A fresh GRR or OUE report at epsilon in every round (module docstring)."""

    name = "l-naive"
    #: "2": the per-user draw of unary bits changed (``_longitudinal.bernoulli_bits``), same law
    algorithm_version = "2"
    params = (
        Param("oracle", str, "grr", "the oracle of every round's fresh report: grr or oue", choices=("grr", "oue")),
    )

    def tags(self) -> ProtocolTags:
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("sequence",))

    def chain(self, d: int, epsilon: float) -> lg.Chain:
        """The identity PRR, then the oracle at ``epsilon``."""
        if self.oracle == "grr":
            p, q = lg.grr_layer(d, epsilon)
            return lg.Chain("grr", d, 1.0, 0.0, p, q)
        p, q = lg.oue_layer(epsilon)
        return lg.Chain("ue", d, 1.0, 0.0, p, q)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``epsilon`` per report, no ``epsilon_inf``: T rounds cost ``T * epsilon``."""
        return lg.naive_accounting(epsilon)

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        chain = self.chain(population.d, epsilon)
        declared = lg.declared_budgets(self.privacy_accounting(epsilon))
        return lg.round_estimates(chain, population, epsilon, rng, simulation, self.name, declared=declared)

    def static_supports(
        self,
        d: int,
        epsilon: float,
        values: np.ndarray,
        T: int,
        rng: np.random.Generator,  # noqa: N803
    ) -> np.ndarray:
        """T fresh reports per user (the identity PRR), for the averaging audit."""
        return lg.static_supports(self.chain(d, epsilon), values, T, rng)


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(NaiveRounds)
