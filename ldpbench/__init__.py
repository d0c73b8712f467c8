"""ldpbench: a benchmark harness for frequency estimation under local differential privacy.

The public surface is declared here, and only here (docs/python-api.md documents it). Each public
name has one import path, the one below; every other module of ldpbench is internal and may move
(docs/architecture.md says where each stage lives).

- ``ldpbench``: :data:`hookimpl`, ``__version__``, :func:`run`, :func:`postprocess`,
  :func:`estimate_from_vector`, :func:`build_plugins` and :class:`RunOutcome` (the notebook API);
- ``ldpbench.types``: the plugin contract and the data model (:class:`~ldpbench.types.Oracle`,
  :class:`~ldpbench.types.Estimate`, the tags, the kinds ...);
- ``ldpbench.params``: :class:`~ldpbench.params.Param` and ``REQUIRED``, how a plugin declares its
  parameters;
- ``ldpbench.errors``: what a plugin raises (``NotApplicable``, ``ParamError`` ...) and a caller
  catches;
- ``ldpbench.hookspecs``: the registration hooks;
- ``ldpbench.testing`` (and ``ldpbench.testing.stats``): the conformance kit and the statistical
  test helpers;
- ``ldpbench.audit``: the privacy audits (:func:`~ldpbench.audit.audit_plugin`).

A plugin module needs only::

    from ldpbench import hookimpl
    from ldpbench.types import Oracle, PostProcessor, Metric, Dataset, Estimate, Population
    from ldpbench.params import Param
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pluggy

from ldpbench.util.version import VERSION as __version__

#: Marker for hook implementations in plugin modules (``@hookimpl``).
hookimpl = pluggy.HookimplMarker("ldpbench")

from ldpbench.api import estimate_from_vector, postprocess, run  # noqa: E402
from ldpbench.loading.manager import build_plugins  # noqa: E402

if TYPE_CHECKING:
    from ldpbench.runner import RunOutcome

#: The public modules, besides this one (tests/meta/test_surface.py keeps imports to these paths).
PUBLIC_MODULES = (
    "ldpbench.types",
    "ldpbench.params",
    "ldpbench.errors",
    "ldpbench.hookspecs",
    "ldpbench.testing",
    "ldpbench.testing.stats",
    "ldpbench.audit",
)

__all__ = [
    "__version__",
    "hookimpl",
    "RunOutcome",
    "build_plugins",
    "estimate_from_vector",
    "postprocess",
    "run",
]

#: Names this package exported before the public surface was declared, and their one path now.
_MOVED = {
    **dict.fromkeys(("Param", "REQUIRED"), "ldpbench.params"),
    **dict.fromkeys(
        (
            "Channel",
            "Dataset",
            "Estimate",
            "Executor",
            "Metric",
            "Oracle",
            "Population",
            "PostProcessor",
            "PriorFamily",
            "Protocol",
        ),
        "ldpbench.types",
    ),
}


def __getattr__(name: str) -> Any:
    if name == "RunOutcome":  # loaded on use: the runner brings polars, which a plugin import need not pay for
        from ldpbench.runner import RunOutcome

        return RunOutcome
    if name in _MOVED:
        import importlib

        warnings.warn(
            f"ldpbench.{name} is {_MOVED[name]}.{name}: import it from there", DeprecationWarning, stacklevel=2
        )
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'ldpbench' has no attribute {name!r}")
