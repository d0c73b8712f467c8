"""The poisoning-attack contract: :class:`Attack` (docs/poisoning.md).

An attack controls ``m`` fake users who join the ``n`` genuine ones of a population. It knows the
oracle (its class and public parameters: ``d``, ``epsilon``, the hash range...) and a target set,
and crafts the fake users' reports **in the oracle's own report encoding** (what
:meth:`~ldpbench.types.Oracle.perturb` returns), following Cao, Jia & Gong, "Data Poisoning Attacks
to Local Differential Privacy Protocols" (USENIX Security 2021, arXiv:1911.02046). The engine adds
them to the genuine users' aggregate with the oracle's own aggregator
(:meth:`~ldpbench.types.Oracle.support_counts`, or :meth:`~ldpbench.types.Oracle.report_histogram`
for a finite report space) and estimates over all ``n + m`` reports: the fake reports go through
exactly the aggregation the genuine ones do.

A heavy-hitter protocol whose rounds report with local hashing over candidate prefixes (PEM)
takes a :class:`ProtocolPoison` in its ``run``: in each round it asks the attack for its fake users'
reports (:meth:`Attack.craft_hashed`, seeds and hash values promoting the targets' prefixes) and
counts them with the genuine ones, with the round's own support counting (Cao, Jia & Gong §6).
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from ldpbench.errors import NotApplicable
from ldpbench.types.oracle import Oracle
from ldpbench.types.plugin import Plugin
from ldpbench.types.tags import AttackTags


class Attack(Plugin):
    """``craft(oracle, targets, m, rng) -> reports``: the reports of ``m`` fake users (and, for the
    protocols in :attr:`protocols`, ``craft_hashed`` for each of their rounds).

    :attr:`oracles` names the oracles the attack is defined for (read through :meth:`tags`); the
    spec validator refuses any other pairing (``FILE:LINE``, naming these).
    """

    #: The registered names of the oracles whose reports this attack can craft; ``"*"`` for every
    #: oracle (an attack that only perturbs chosen items honestly). Empty: none (every spec using
    #: the attack is refused).
    oracles: ClassVar[tuple[str, ...]] = ()
    #: The registered names of the protocols whose rounds this attack crafts reports for, through
    #: :meth:`craft_hashed` (the protocol calls it in each round). Empty: none.
    protocols: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """``oracles`` is a tuple of oracle names (non-empty strings)."""
        problems = super().contract_problems(cls)
        for attr, names in (("oracles", cls.oracles), ("protocols", cls.protocols)):
            if not isinstance(names, tuple) or not all(isinstance(n, str) and n for n in names):
                problems.append(f"{attr} must be a tuple of {attr[:-1]} names, got {names!r}")
        return problems

    def tags(self) -> AttackTags:
        """The oracles the attack is defined for (from the class attribute :attr:`oracles`)."""
        return AttackTags(oracles=tuple(type(self).oracles), protocols=tuple(type(self).protocols))

    @abstractmethod
    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator) -> Any:
        """The reports of ``m >= 1`` fake users, in ``oracle``'s report encoding (what its
        ``perturb`` returns for ``m`` users), promoting the items ``targets`` (a sorted int64
        array of distinct items in ``[0, d)``). ``rng`` is the attack's own stream."""

    def craft_hashed(
        self, keys: np.ndarray, g: int, epsilon: float, m: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """One round of a heavy-hitter protocol reporting with local hashing (PEM's OLH rounds):
        the ``(seeds, values)`` of ``m >= 1`` fake users' reports, ``seeds`` uint64 hash seeds and
        ``values`` in ``[0, g)``, promoting the candidates whose 64-bit hash keys are ``keys`` (the
        targets' distinct prefixes of the round; ``ldpbench_plugins.oracles._hashing``'s family:
        a report ``(s, y)`` supports the candidate of key ``k`` when ``H_s(k) = y``). ``epsilon``
        is the round's budget (an honest attack perturbs at it). Default: not defined."""
        raise NotApplicable(f"attack '{self.name}' does not craft the reports of a protocol's rounds")


@dataclasses.dataclass(frozen=True)
class ProtocolPoison:
    """What a protocol's ``run(..., poison=...)`` gets in an attacked cell: the attack, its target
    items (sorted int64), the number ``m`` of fake users and the attack's own stream (apart from the
    genuine users' draws, which stay those of the unattacked cell)."""

    attack: Attack
    targets: np.ndarray
    fake_users: int
    rng: np.random.Generator
