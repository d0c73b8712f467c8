"""How plugins are registered: one registration hook per plugin kind.

What a registered class must (and may) provide is declared on its kind's base class in
:mod:`ldpbench.types` (one module per kind, optional capabilities as ``tags()``), and which hook
registers which kind in :data:`ldpbench.types.kinds.KINDS`; this module only says how classes
reach the registry.

A plugin module implements any of these hooks with :data:`ldpbench.hookimpl` and calls
``registry.register(SomeClass)`` for each class it provides::

    from ldpbench import hookimpl
    from ldpbench.types import Metric

    class MaxError(Metric):
        name = "max-error"
        def score(self, truth, estimate, rng):
            return float(abs(estimate.item_answers() - truth.frequencies).max())

    @hookimpl
    def ldpbench_register_metrics(registry):
        registry.register(MaxError)

and declares the module in its ``pyproject.toml`` under ``[project.entry-points.ldpbench]``.
The registry validates each class on the spot (name pattern, duplicate names naming both
origins, the kind's required methods, the parameter declaration, capabilities that contradict the
methods) and knows which plugin is calling, so errors name the plugin and its distribution.

Registration hooks are called once per plugin manager, in no particular order: a duplicate name
is an error, never an override. Implementations may accept fewer arguments than the spec (pluggy's
opt-in arguments), so new arguments can be added later without breaking plugins.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("ldpbench")


@hookspec
def ldpbench_register_oracles(registry):  # type: ignore[no-untyped-def]
    """Register frequency oracles (subclasses of :class:`ldpbench.types.Oracle`).

    :param registry: call ``registry.register(cls)`` once per oracle class.
    """


@hookspec
def ldpbench_register_postprocessors(registry):  # type: ignore[no-untyped-def]
    """Register post-processors (subclasses of :class:`ldpbench.types.PostProcessor`).

    :param registry: call ``registry.register(cls)`` once per post-processor class.
    """


@hookspec
def ldpbench_register_prior_families(registry):  # type: ignore[no-untyped-def]
    """Register prior families (subclasses of :class:`ldpbench.types.PriorFamily`), used by
    Calibrate and Power.

    :param registry: call ``registry.register(cls)`` once per family.
    """


@hookspec
def ldpbench_register_metrics(registry):  # type: ignore[no-untyped-def]
    """Register metrics (subclasses of :class:`ldpbench.types.Metric`).

    :param registry: call ``registry.register(cls)`` once per metric.
    """


@hookspec
def ldpbench_register_datasets(registry):  # type: ignore[no-untyped-def]
    """Register datasets (subclasses of :class:`ldpbench.types.Dataset`).

    :param registry: call ``registry.register(cls)`` once per dataset.
    """


@hookspec
def ldpbench_register_protocols(registry):  # type: ignore[no-untyped-def]
    """Register end-to-end protocols (subclasses of :class:`ldpbench.types.Protocol`), such as
    Blender's hybrid opt-in + local model.

    :param registry: call ``registry.register(cls)`` once per protocol.
    """


@hookspec
def ldpbench_register_executors(registry):  # type: ignore[no-untyped-def]
    """Register executors (subclasses of :class:`ldpbench.types.Executor`) that run a spec's cells.

    :param registry: call ``registry.register(cls)`` once per executor.
    """


@hookspec
def ldpbench_register_attacks(registry):  # type: ignore[no-untyped-def]
    """Register poisoning attacks (subclasses of :class:`ldpbench.types.Attack`), which craft the
    reports of fake users (docs/poisoning.md).

    :param registry: call ``registry.register(cls)`` once per attack.
    """
