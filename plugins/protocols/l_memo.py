"""Longitudinal frequency estimation with memoization (docs/longitudinal.md): one frequency
estimate per round (outputs ``round-1`` ... ``round-T``) of a population over rounds.

The spec's ``epsilon`` is ``eps_inf``, the bound over any number of reports of a user whose value
does not change; ``alpha`` sets one report's budget ``eps_1 = alpha * eps_inf`` (0 < alpha < 1).

- ``l-grr``, ``l-oue``, ``l-osue``, ``l-sue``, ``l-soue``: Arcolezi, Pinzón, Palamidessi & Gambs,
  "Frequency Estimation of Evolving Data Under Local Differential Privacy", EDBT 2023
  (arXiv:2210.00262), §3: a permanent randomized response (PRR) at ``eps_inf``, memoized per user
  and value, then an instantaneous one (IRR) per report, whose parameters make one report exactly
  ``eps_1``-LDP. L-GRR chains GRR and GRR; over unary encoding, L-SUE chains SUE and SUE (basic
  RAPPOR's structure), L-OUE OUE and OUE, L-OSUE OUE then SUE (the paper's recommended one),
  L-SOUE SUE then OUE. The IRR's free parameter is solved numerically from the ``eps_1``
  constraint (``_longitudinal.solve_irr``); the paper gives the same roots in closed form.
- ``l-olh``: L-OLH (the same paper, §3.4): the value hashed to ``[g]`` with a per-(user, value)
  seed, then L-GRR over ``[g]``; the server counts the reports matching each item's hash.
  Per-user path only.
- ``rappor``: basic one-hash RAPPOR (Erlingsson, Pihur & Korolova, CCS 2014, §3 and §3.1): a
  d-bit unary encoding, the PRR keeps each bit with probability ``1 - f`` and sets it to 1 or 0
  with ``f/2`` each (``p1 = 1 - f/2``, ``q1 = f/2``), the IRR reports 1 with probability ``q``
  for a PRR bit of 1 and ``p`` for 0 (``p2 = q``, ``q2 = p``). ``eps_inf = 2 ln((1 - f/2)/(f/2))``
  (h = 1): ``f`` is set from the spec's ``epsilon``; ``p`` and ``q`` are parameters (the paper's
  0.5 and 0.75), so ``eps_1`` follows from them (its §3.1 formula).

Estimator and variance: the per-round unbiased estimator of ``_longitudinal`` (module docstring:
``(C_v/n - q*)/(p* - q*)``; the paper's ``Var*`` at f = 0). Both simulation paths, the exact
aggregate drawing each PRR once per activity pattern and value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, Population, Protocol, ProtocolTags
from ldpbench.types.domain import FREQUENCIES

from . import _longitudinal as lg

_ALPHA = Param(
    "alpha", float, 0.5, "eps_1 / eps_inf: one report's share of the bound over all reports", min=0.01, max=0.99
)


class _Memoized(Protocol):
    """A PRR family and an IRR family (``_longitudinal.Chain``), eps_1 = alpha * eps_inf."""

    #: "2": the per-user path numbers pairs by first round and draws unary bits from bytes
    #: (``_longitudinal.bernoulli_bits``): the same law, other numbers per seed
    algorithm_version = "2"
    #: PRR family: ``grr``, ``sue`` or ``oue``; IRR family likewise
    prr: str = "grr"
    irr: str = "grr"
    params = (_ALPHA,)

    def tags(self) -> ProtocolTags:
        # One estimate per round of users holding one item per round.
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("sequence",))

    def chain(self, d: int, epsilon: float) -> lg.Chain:
        """The two layers at ``eps_inf = epsilon`` over ``[d]``."""
        kind = "grr" if self.prr == "grr" else "ue"
        layer = {"grr": lambda e: lg.grr_layer(d, e), "sue": lg.sue_layer, "oue": lg.oue_layer}[self.prr]
        p1, q1 = layer(epsilon)
        return lg.solve_irr(kind, d, p1, q1, self.irr, self.alpha * epsilon)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``eps_inf = epsilon`` (the PRR's), ``eps_1 = alpha * epsilon`` (one report), a value
        change costs a new PRR (``eps_inf`` again)."""
        return lg.memo_accounting(epsilon, self.alpha * epsilon)

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
        """One PRR per user, T IRRs (``_longitudinal.static_supports``), for the averaging audit."""
        return lg.static_supports(self.chain(d, epsilon), values, T, rng)


class LGRR(_Memoized):
    """L-GRR: GRR PRR at eps_inf, GRR IRR (Arcolezi et al., EDBT 2023, §3.2)."""

    name = "l-grr"
    prr, irr = "grr", "grr"


class LOUE(_Memoized):
    """L-OUE: OUE PRR at eps_inf, OUE IRR (Arcolezi et al., EDBT 2023, §3.3)."""

    name = "l-oue"
    prr, irr = "oue", "oue"


class LOSUE(_Memoized):
    """L-OSUE: OUE PRR at eps_inf, SUE IRR (Arcolezi et al., EDBT 2023, §3.3)."""

    name = "l-osue"
    prr, irr = "oue", "sue"


class LSUE(_Memoized):
    """L-SUE: SUE PRR at eps_inf, SUE IRR (basic RAPPOR's layers; Arcolezi et al., EDBT 2023, §3.3)."""

    name = "l-sue"
    prr, irr = "sue", "sue"


class LSOUE(_Memoized):
    """L-SOUE: SUE PRR at eps_inf, OUE IRR (Arcolezi et al., EDBT 2023, §3.3)."""

    name = "l-soue"
    prr, irr = "sue", "oue"


class Rappor(_Memoized):
    """Basic one-hash RAPPOR (Erlingsson et al., CCS 2014, §3): PRR ``f`` from eps_inf, IRR ``p, q``."""

    name = "rappor"
    params = (
        Param("p", float, 0.5, "IRR: probability of reporting 1 for a PRR bit of 0", min=0.0, max=1.0),
        Param("q", float, 0.75, "IRR: probability of reporting 1 for a PRR bit of 1 (q > p)", min=0.0, max=1.0),
    )

    def chain(self, d: int, epsilon: float) -> lg.Chain:
        """``f/2 = 1/(1 + e^(eps_inf/2))`` (so ``eps_inf = 2 ln((1 - f/2)/(f/2))``), IRR ``(q, p)``."""
        half_f = 1 / (1 + math.exp(epsilon / 2))
        if not self.q > self.p:
            raise NotApplicable(f"rappor needs q > p (got p = {self.p:g}, q = {self.q:g})")
        return lg.Chain("ue", d, 1 - half_f, half_f, self.q, self.p)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``eps_inf = epsilon``; ``eps_1`` from ``p, q`` and ``f`` (CCS 2014 §3.1), domain-free."""
        return lg.memo_accounting(epsilon, self.chain(2, epsilon).eps_1)


class LOLH(_Memoized):
    """L-OLH: each (user, value) pair hashes the value to ``[g]`` with its own seed, then GRR over
    ``[g]`` as PRR at eps_inf and as IRR at eps_1 (Arcolezi et al., EDBT 2023, §3.4; ``g`` chosen
    to minimize the approximate variance, as their optimal L-OLH). Per-user only: the hash ties a
    user's supports of every item together across rounds, which no per-item binomial draw keeps."""

    name = "l-olh"

    def tags(self) -> ProtocolTags:
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("sequence",), aggregate=False)

    def chain(self, d: int, epsilon: float) -> lg.Chain:
        """The estimating chain over the chosen ``g`` (``_longitudinal.olh_chain``)."""
        eps_1 = self.alpha * epsilon
        return lg.olh_chain(d, epsilon, eps_1, lg.olh_buckets(epsilon, eps_1))

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "per-user"
    ) -> Mapping[str, Estimate]:
        chain = self.chain(population.d, epsilon)
        declared = lg.declared_budgets(self.privacy_accounting(epsilon))
        return lg.round_estimates(
            chain, population, epsilon, rng, simulation, self.name, draw=lg.olh_per_user_support, declared=declared
        )

    def static_supports(
        self,
        d: int,
        epsilon: float,
        values: np.ndarray,
        T: int,
        rng: np.random.Generator,  # noqa: N803
    ) -> np.ndarray:
        """One seed and PRR bucket per user, T IRR buckets (``_longitudinal.olh_static_supports``)."""
        return lg.olh_static_supports(self.chain(d, epsilon), d, values, T, rng)


@hookimpl
def ldpbench_register_protocols(registry):
    for cls in (LGRR, LOUE, LOSUE, LSUE, LSOUE, LOLH, Rappor):
        registry.register(cls)
