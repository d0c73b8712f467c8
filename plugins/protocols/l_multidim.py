"""Longitudinal SPL and SMP: several attributes per user, collected over rounds with memoization
(docs/multidimensional.md).

Arcolezi, Couchot, Al Bouna & Xiao, "Improving the Utility of Locally Differentially Private
Protocols for Longitudinal and Multidimensional Frequency Estimates", arXiv:2111.04636 (and
multi-freq-ldpy's ``long_mdim_freq_est``, ``SPL_L_*`` and ``SMP_L_*``): the multidimensional
solutions with a longitudinal protocol (``_longitudinal.Chain``: a permanent randomized response
memoized per user and value, an instantaneous one per report) as the local randomizer of each
attribute. ``oracle:`` is the longitudinal protocol (``l-grr``, ``l-oue``, ``l-osue``, ``l-sue``,
``l-soue``: ``l_memo.py``); the spec's ``epsilon`` is ``eps_inf`` and ``alpha`` sets
``eps_1 = alpha * eps_inf``, as for those protocols.

- ``l-spl``: every attribute reported every round through the chain at ``(eps_inf / a, eps_1 / a)``
  (sequential composition over the a attributes: the whole report is ``eps_1``-LDP, any number of
  reports of an unchanged record ``eps_inf``-LDP). Attribute j's estimate in round t is the chain's
  unbiased ``(C_v / n - q*) / (p* - q*)`` over all n users, variance ``Chain.variance(n, f)``.
- ``l-smp``: each user samples one attribute ``J_i`` uniformly **once** and reports only it, every
  round, through the chain at ``(eps_inf, eps_1)`` (the sample is memoized with the PRR: a fresh
  sample per round would, over rounds, reveal every attribute at ``eps_inf`` each). Attribute j is
  estimated from the ``n_j`` users who sampled it: unbiased, of variance ``E[Var_chain(n_j, f_j)]``
  plus the sampled users' own spread about ``f`` (``f (1 - f)(n - n_j) / (n_j (n - 1))``), as SMP.

Outputs ``attribute:round-t`` (1-based) and ``attribute:rounds-mean`` for every attribute, scored
against that attribute's marginal in round t (``ldpbench.types.attributes.output_truth``). The
users' rows over rounds are ``Attributes.rounds`` (``adult-attributes-rounds``); a tuple population
without them is one round.

Accounting (run manifest): ``epsilon_inf = eps_inf`` for a user whose record does not change,
``epsilon_1 = alpha * eps_inf`` per report; a changed value draws a new PRR for that attribute
(``eps_inf / a`` more per distinct value of an attribute for l-spl; ``eps_inf`` per distinct value
of the sampled attribute for l-smp).

Both paths: each attribute's sequences go through ``_longitudinal``'s per-user draw or its exact
aggregate draw over activity patterns; l-smp draws every ``J_i`` (O(n), vectorized).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Population
from ldpbench.types.rounds import Rounds

from . import _longitudinal as lg
from ._multidim import MultidimProtocol, attributes_of, kron_all
from .l_memo import LGRR, LOSUE, LOUE, LSOUE, LSUE

#: The longitudinal protocols a solution runs per attribute (multi-freq-ldpy's L-GRR, L-OUE,
#: L-OSUE, L-SUE, L-SOUE).
CHAINS = {cls.name: cls for cls in (LGRR, LOUE, LOSUE, LSUE, LSOUE)}


def chain_matrix(chain: lg.Chain) -> np.ndarray:
    """``M[x, y]``: one report of the chain (PRR then IRR) over ``[k]``: GRR supports ``p*`` / ``q*``
    on the reported value; UE: ``k`` independent bits, bit v 1 w.p. ``p*`` (v held) or ``q*``
    (reports are bit vectors read as binary numbers, bit v = value v)."""
    k, ps, qs = chain.k, chain.p_star, chain.q_star
    if chain.kind == "grr":
        return np.where(np.eye(k, dtype=bool), ps, qs)
    bits = (np.arange(1 << k)[None, :] >> np.arange(k)[:, None]) & 1  # (k, 2^k): bit v of report y
    out = np.empty((k, 1 << k))
    for x in range(k):  # tiny domains only (the audit)
        prob = np.where(np.arange(k)[:, None] == x, ps, qs)
        out[x] = np.prod(np.where(bits == 1, prob, 1 - prob), axis=0)
    return out


def attribute_rounds(items: np.ndarray, d: int) -> Population:
    """One attribute's ``(T, m)`` sequences as a sequence population over ``[d]``."""
    return Population(np.bincount(items[0], minlength=d), record="sequence", rounds=Rounds(items))


class _LongMultidim(MultidimProtocol):
    #: "2": the longitudinal per-user draw changed (``_longitudinal.bernoulli_bits``), same law
    algorithm_version = "2"
    params = (
        Param("oracle", str, "l-osue", "the longitudinal protocol of every attribute", choices=tuple(CHAINS)),
        Param(
            "alpha", float, 0.5, "eps_1 / eps_inf: one report's share of the bound over all reports", min=0.01, max=0.99
        ),
    )

    def chain(self, d: int, eps_inf: float) -> lg.Chain:
        """The two layers of ``oracle`` over ``[d]`` at ``eps_inf``, ``eps_1 = alpha * eps_inf``."""
        return CHAINS[self.oracle](alpha=self.alpha).chain(d, eps_inf)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``epsilon_inf = epsilon`` over any number of reports of an unchanged record, ``epsilon_1``
        per report; a change of value costs a new PRR (module docstring)."""
        rows = lg.memo_accounting(epsilon, self.alpha * epsilon)
        rows[0]["on_change"] = self.on_change
        return rows

    def _estimates(self, items, d, eps_inf, epsilon, rng, simulation, name) -> dict[str, Estimate]:
        out = lg.round_estimates(
            self.chain(d, eps_inf), attribute_rounds(items, d), epsilon, rng, simulation, self.name
        )
        return {f"{name}:{label}": est for label, est in out.items()}


class LSPL(_LongMultidim):
    """Every attribute every round through the longitudinal protocol at eps_inf / a, eps_1 / a."""

    name = "l-spl"
    on_change = (
        "a new permanent response for the changed attribute: epsilon_inf / a again per distinct value an "
        "attribute takes (sequential composition)"
    )

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        out: dict[str, Estimate] = {}
        for j, name in enumerate(attrs.names):
            items = attrs.round_items(j)
            out.update(self._estimates(items, attrs.sizes[j], epsilon / attrs.a, epsilon, rng, simulation, name))
        return out

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """One round's whole report: every attribute at ``eps_1 / a``, ``eps_1`` over any two
        records, ``eps_1 / a`` over one attribute (``eps_inf`` bounds all rounds: accounting)."""
        a, e1 = len(sizes), self.alpha * epsilon
        return {"per_attribute": [e1 / a] * a, "any_records": e1, "one_attribute": e1 / a}

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """The law of one round's whole report: the attributes' one-report chain laws at
        ``eps_inf / a``, independent given the record (a Kronecker product)."""
        return kron_all([chain_matrix(self.chain(d, epsilon / len(sizes))) for d in sizes])


class LSMP(_LongMultidim):
    """Each user samples one attribute once and reports it every round at eps_inf, eps_1."""

    name = "l-smp"
    on_change = (
        "a new permanent response when the sampled attribute changes: epsilon_inf again per distinct value "
        "it takes (the other attributes are never reported)"
    )

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        chosen = rng.integers(0, attrs.a, size=attrs.n)
        out: dict[str, Estimate] = {}
        for j, name in enumerate(attrs.names):
            items = attrs.round_items(j)[:, chosen == j]
            if items.shape[1] == 0:
                raise ValueError(f"no user sampled attribute '{name}': too few users for l-smp")
            out.update(self._estimates(items, attrs.sizes[j], epsilon, epsilon, rng, simulation, name))
        return out

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """One round's report ``(J, y)``: the sampled attribute at ``eps_1``, which bounds any two
        records and one attribute alike."""
        e1 = self.alpha * epsilon
        return {"per_attribute": [e1] * len(sizes), "any_records": e1, "one_attribute": e1}

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """``P[x, (j, y)] = M_j(y | x_j) / a``, ``M_j`` one report of the chain at ``eps_inf``
        (attribute slowest), as SMP's."""
        a, records = len(sizes), np.array(list(np.ndindex(*sizes)), dtype=np.int64).reshape(-1, len(sizes))
        return np.concatenate(
            [chain_matrix(self.chain(d, epsilon))[records[:, j]] / a for j, d in enumerate(sizes)], axis=1
        )


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(LSPL)
    registry.register(LSMP)
