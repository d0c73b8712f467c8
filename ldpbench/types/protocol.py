"""The protocol contract: :class:`Protocol` (end-to-end mechanisms such as Blender)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench.types.data import Estimate, IdentifiedItems, Population
from ldpbench.types.domain import Domain
from ldpbench.types.oracle import Oracle
from ldpbench.types.plugin import Plugin
from ldpbench.types.tags import ProtocolTags


class Protocol(Plugin):
    """An end-to-end mechanism that is not "one oracle, then post-processing" (Blender).

    :meth:`run` returns one or more labelled estimates (e.g. ``opt-in``, ``client``, ``blended``),
    each of which goes through the spec's pipelines and metrics like an oracle's estimate.

    A heavy-hitter protocol (PEM) returns :class:`~ldpbench.types.IdentifiedItems` instead, and
    says so in its tags (``result``); one that lists only candidates, never the whole domain,
    states ``enumerates_domain = False`` and may then run on a bit-string domain
    (docs/data-model.md).
    """

    def tags(self) -> ProtocolTags:
        """What the protocol returns and needs (default: frequency vectors, an enumerable domain,
        one item per user, an aggregate path)."""
        return ProtocolTags()

    @abstractmethod
    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate | IdentifiedItems]:
        """Simulate the protocol on the population's users and return labelled results.

        :param simulation: the run's simulation mode, ``aggregate`` or ``per-user`` (the spec's
            ``simulation:``); a protocol with both an exact aggregate shortcut and a faithful
            per-user path chooses by it, like an oracle.
        """

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """The guarantee each group of users receives at budget ``epsilon``, for the run manifest.

        One mapping per group: ``group`` (who), ``model`` (``local``, ``central``, ...),
        ``epsilon`` and, where it applies, ``delta``. A protocol that collects in rounds adds
        ``per_round``: the budget those users spend in each round (0 where they do not report),
        which adds up to ``epsilon`` under sequential composition. The default says only that all users share
        ``epsilon`` under a model the protocol did not state; a hybrid protocol (Blender: central
        opt-in users, local clients) overrides it.
        """
        return [{"group": "all users", "model": "unknown", "epsilon": float(epsilon)}]

    def round_accounting(self, epsilon: float, domain: Domain) -> list[dict[str, Any]]:
        """:meth:`privacy_accounting` on a given domain, where the rounds depend on it (PEM's
        number of rounds grows with the items' width): each group's ``per_round`` then has one
        entry per round of a run on that domain. The default is :meth:`privacy_accounting`."""
        return self.privacy_accounting(epsilon)

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """The frequency oracle each round's reports come from, for the audits: ``(which rounds,
        oracle class, the budget it runs at)``. The class must draw reports with the protocol's own
        code (built at a small audit domain ``d`` with that budget); the conformance kit audits
        each exactly and empirically. Default: none declared (the kit says so)."""
        return []

    def static_supports(
        self,
        d: int,
        epsilon: float,
        values: np.ndarray,
        T: int,
        rng: np.random.Generator,  # noqa: N803
    ) -> np.ndarray:
        """For a protocol that collects over rounds (record ``sequence``): ``(users, d)``, how many
        of the T reports of each user who keeps ``values[i]`` support each item, drawn with the
        protocol's own code at budget ``epsilon`` over ``[d]``. The averaging attack of ``ldpbench
        audit`` reads it (``ldpbench.audit.averaging``, docs/longitudinal.md). Default: not
        declared (``NotImplementedError``; the audit says so)."""
        raise NotImplementedError

    # -- multidimensional protocols (records = ("tuple",)): the whole record's report, audited ------
    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, Any] | None:
        """For a protocol whose users hold tuples (docs/multidimensional.md): ``per_attribute`` (the
        budget each attribute's report is randomized at), ``any_records`` and ``one_attribute``
        (the bound the whole report meets over any two records, over records that differ in one
        attribute), for attribute domains ``sizes``. Default ``None``: not declared (the
        conformance kit fails a multidimensional protocol without it)."""
        return None

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> Any:
        """The exact law ``P[x, y]`` of a user's whole report over every record ``x`` of
        ``[d_1] x ... x [d_a]`` (row-major) and every whole report ``y``, for small domains (the
        whole-record audit). Default ``None``: not declared."""
        return None

    def perturb_records(self, rows: Any, sizes: tuple[int, ...], epsilon: float, rng: Any) -> Any:
        """Whole reports of the users' records ``rows`` (``(n, a)``), drawn with the protocol's own
        code: ``report_table`` columns, or the protocol's encoding that :meth:`report_columns`
        maps to them. Default ``None``: not declared (the audit then checks the table alone)."""
        return None

    def report_columns(self, reports: Any, sizes: tuple[int, ...], epsilon: float) -> Any:
        """The ``report_table`` column of each report :meth:`perturb_records` drew in an encoding
        of its own (one column per attribute). Default ``None``: reports are columns already."""
        return None
