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
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from ldpbench.types.oracle import Oracle
from ldpbench.types.plugin import Plugin
from ldpbench.types.tags import AttackTags


class Attack(Plugin):
    """``craft(oracle, targets, m, rng) -> reports``: the reports of ``m`` fake users.

    :attr:`oracles` names the oracles the attack is defined for (read through :meth:`tags`); the
    spec validator refuses any other pairing (``FILE:LINE``, naming these).
    """

    #: The registered names of the oracles whose reports this attack can craft; ``"*"`` for every
    #: oracle (an attack that only perturbs chosen items honestly). Empty: none (every spec using
    #: the attack is refused).
    oracles: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """``oracles`` is a tuple of oracle names (non-empty strings)."""
        problems = super().contract_problems(cls)
        names = cls.oracles
        if not isinstance(names, tuple) or not all(isinstance(n, str) and n for n in names):
            problems.append(f"oracles must be a tuple of oracle names, got {names!r}")
        return problems

    def tags(self) -> AttackTags:
        """The oracles the attack is defined for (from the class attribute :attr:`oracles`)."""
        return AttackTags(oracles=tuple(type(self).oracles))

    @abstractmethod
    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator) -> Any:
        """The reports of ``m >= 1`` fake users, in ``oracle``'s report encoding (what its
        ``perturb`` returns for ``m`` users), promoting the items ``targets`` (a sorted int64
        array of distinct items in ``[0, d)``). ``rng`` is the attack's own stream."""
