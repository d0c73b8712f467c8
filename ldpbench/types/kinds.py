"""The plugin kinds, each declared once.

A kind is everything ldpbench knows about one family of plugins: its name (the one spelling, used
by registries, ``--kind``, messages and specs), its base class (the whole contract, and the
registration rules, :meth:`~ldpbench.types.plugin.Plugin.contract_problems`), the hook that
registers it (:mod:`ldpbench.hookspecs`), the folder of the built-ins and the prefix of their entry
points, its conformance checks (:mod:`ldpbench.testing.checks`) and the example ``ldpbench
new-plugin`` writes (:mod:`ldpbench.scaffold.examples`). Every table of kinds elsewhere (the
registries, the kit, ``check-plugin``, ``new-plugin``, ``describe`` and ``plugins --kind``) is
derived from :data:`KINDS`; a new kind is added here, with its base class and its hook.

The checks and the example live in packages above this one (the kit and the scaffold import the
contract, never the other way round), so the declaration names them as ``"module:attribute"``
references, resolved on first use (:meth:`PluginKind.resolve`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ldpbench.types.attack import Attack
from ldpbench.types.dataset import Dataset
from ldpbench.types.executor import Executor
from ldpbench.types.metric import Metric
from ldpbench.types.oracle import Oracle
from ldpbench.types.plugin import Plugin
from ldpbench.types.postprocessor import PostProcessor
from ldpbench.types.prior import PriorFamily
from ldpbench.types.protocol import Protocol


@dataclass(frozen=True)
class PluginKind:
    """One plugin kind (see the module docstring)."""

    #: the kind's one spelling: ``postprocessor``
    name: str
    #: its contract; every registered class subclasses it
    base: type[Plugin]
    #: the registration hook in :mod:`ldpbench.hookspecs`
    hook: str
    #: what messages call one: ``a post-processor``
    noun: str
    #: the conformance checks: a module with ``CHECKS`` (the check functions) and ``CONFIG`` (their
    #: configuration class); None when the kit has none for this kind
    checks: str | None = None
    #: the example ``ldpbench new-plugin`` writes (``module:attribute``, a
    #: :class:`~ldpbench.scaffold.examples.KindExample`); None when it writes none
    example: str | None = None

    @property
    def folder(self) -> str:
        """The folder of the built-ins under ``plugins/`` and the prefix of their entry points
        (``postprocessors.em``): the plural of the name."""
        return f"{self.name}s"

    @property
    def kit_function(self) -> str:
        """The kit's entry point for the kind (``check_postprocessor``), if it has checks."""
        return f"check_{self.name}"

    @staticmethod
    def resolve(reference: str) -> Any:
        """The object a ``module`` or ``module:attribute`` reference names (imported on use)."""
        module, _, attribute = reference.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded


ORACLE = PluginKind(
    "oracle",
    Oracle,
    "ldpbench_register_oracles",
    "an oracle",
    checks="ldpbench.testing.checks.oracle",
    example="ldpbench.scaffold.examples:ORACLE",
)
POSTPROCESSOR = PluginKind(
    "postprocessor",
    PostProcessor,
    "ldpbench_register_postprocessors",
    "a post-processor",
    checks="ldpbench.testing.checks.postprocessor",
    example="ldpbench.scaffold.examples:POSTPROCESSOR",
)
PRIOR = PluginKind("prior", PriorFamily, "ldpbench_register_prior_families", "a prior family")
METRIC = PluginKind(
    "metric",
    Metric,
    "ldpbench_register_metrics",
    "a metric",
    checks="ldpbench.testing.checks.metric",
    example="ldpbench.scaffold.examples:METRIC",
)
DATASET = PluginKind(
    "dataset",
    Dataset,
    "ldpbench_register_datasets",
    "a dataset",
    checks="ldpbench.testing.checks.dataset",
    example="ldpbench.scaffold.examples:DATASET",
)
PROTOCOL = PluginKind(
    "protocol",
    Protocol,
    "ldpbench_register_protocols",
    "a protocol",
    checks="ldpbench.testing.checks.protocol",
    example="ldpbench.scaffold.examples:PROTOCOL",
)
EXECUTOR = PluginKind("executor", Executor, "ldpbench_register_executors", "an executor")
ATTACK = PluginKind(
    "attack",
    Attack,
    "ldpbench_register_attacks",
    "an attack",
    checks="ldpbench.testing.checks.attack",
    example="ldpbench.scaffold.examples:ATTACK",
)

#: Every plugin kind, by name, in the order listings show them.
KINDS: dict[str, PluginKind] = {
    k.name: k for k in (ORACLE, POSTPROCESSOR, PRIOR, METRIC, DATASET, PROTOCOL, EXECUTOR, ATTACK)
}
#: The kinds the conformance kit checks (``ldpbench check-plugin``).
CHECKED_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.checks)
#: The kinds ``ldpbench new-plugin`` writes an example of.
SCAFFOLDED_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.example)
