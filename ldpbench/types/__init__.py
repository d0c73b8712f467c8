"""The data model and the plugin contract: what every plugin kind must (and may) provide.

One module per kind; the base class of each kind is its whole contract. Every method, attribute
and optional capability that the engine, the runner, the spec validator or the conformance kit
may use is declared there, with its type and docstring. Optional capabilities are announced by
the kind's ``tags()`` (:mod:`ldpbench.types.tags`), whose default the base class derives from
what the plugin class implements: nothing in ldpbench probes a plugin for attributes.

- data model (:mod:`~ldpbench.types.data`, :mod:`~ldpbench.types.domain`; docs/data-model.md):
  :class:`Population`, :class:`Domain`, :class:`Estimate`, :class:`IdentifiedItems`, :class:`IdentifiedItemsets`,
  :class:`Channel`, :class:`QueryEstimates`;
- plugin kinds: :class:`Oracle`, :class:`Attack`, :class:`PostProcessor`, :class:`PriorFamily`, :class:`Metric`,
  :class:`Dataset`, :class:`Protocol`, :class:`Executor` (and :class:`TaskLost`), all subclasses
  of :class:`Plugin`;
- capability tags: :class:`OracleTags`, :class:`AttackTags`, :class:`PostProcessorTags`, :class:`MetricTags`,
  :class:`ExecutorTags`, :class:`ChannelTags`, :class:`ProtocolTags`;
- :data:`KINDS`: every plugin kind, declared once (:mod:`~ldpbench.types.kinds`: its base class,
  registration hook, checks, example, folder);
- what a plugin raises to decline an input, :class:`ldpbench.errors.NotApplicable` (it fails only
  what depends on it, with the reason recorded).

A plugin class sets ``name`` (lowercase, hyphenated) and ``params`` (a tuple of
:class:`~ldpbench.params.Param`).
"""

from __future__ import annotations

import warnings
from typing import Any

from ldpbench.types.attack import Attack, ProtocolPoison
from ldpbench.types.data import (
    Channel,
    Estimate,
    IdentifiedItems,
    IdentifiedItemsets,
    Poisoning,
    Population,
    QueryEstimates,
)
from ldpbench.types.dataset import Dataset
from ldpbench.types.domain import Domain
from ldpbench.types.executor import Executor, TaskLost
from ldpbench.types.kinds import KINDS, PluginKind
from ldpbench.types.metric import Metric
from ldpbench.types.oracle import Oracle
from ldpbench.types.plugin import Plugin, implements
from ldpbench.types.postprocessor import PostProcessor
from ldpbench.types.prior import PriorFamily
from ldpbench.types.protocol import Protocol
from ldpbench.types.tags import (
    AttackTags,
    ChannelTags,
    ExecutorTags,
    MetricTags,
    OracleTags,
    PostProcessorTags,
    ProtocolTags,
)

__all__ = [
    "KINDS",
    "Attack",
    "AttackTags",
    "Channel",
    "ChannelTags",
    "Dataset",
    "Domain",
    "Estimate",
    "Executor",
    "ExecutorTags",
    "IdentifiedItems",
    "IdentifiedItemsets",
    "Metric",
    "MetricTags",
    "Oracle",
    "OracleTags",
    "Plugin",
    "Poisoning",
    "Population",
    "PostProcessor",
    "PluginKind",
    "PostProcessorTags",
    "PriorFamily",
    "Protocol",
    "ProtocolPoison",
    "ProtocolTags",
    "QueryEstimates",
    "TaskLost",
    "implements",
]


def __getattr__(name: str) -> Any:
    if name == "NotApplicable":  # its one path is ldpbench.errors, with the other errors
        from ldpbench.errors import NotApplicable

        warnings.warn(
            "ldpbench.types.NotApplicable is ldpbench.errors.NotApplicable: import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return NotApplicable
    raise AttributeError(f"module 'ldpbench.types' has no attribute {name!r}")
