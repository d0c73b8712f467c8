"""Typed per-kind registries that validate a plugin class the moment it is registered.

Each registration hook receives a registry bound to the calling plugin (its module and
distribution), so every message names who registered what: a duplicate name names *both* origins,
a class missing a method names its plugin and distribution (flake8's ``FailedToLoadPlugin`` and
pluggy's ``_verify_hook`` are the models).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ldpbench.errors import PluginError, UnknownPluginError
from ldpbench.loading.identity import PluginIdentity, plugin_identity
from ldpbench.params import Param, ResolvedParams, check_declaration, resolve
from ldpbench.types import Plugin
from ldpbench.types.kinds import KINDS
from ldpbench.util.suggest import closest

#: Plugin names: lowercase words of letters and digits joined by single hyphens.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Origin:
    """Where a registration came from."""

    plugin: str  #: the pluggy plugin name (the entry-point name, or the file for --plugins-dir)
    module: str
    distribution: str
    version: str
    source: str  #: "entry-point", "plugins-dir" or "direct"

    def __str__(self) -> str:
        return f"{self.module} ({self.distribution} {self.version})"


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin class."""

    name: str
    kind: str
    cls: type[Plugin]
    origin: Origin

    @property
    def params(self) -> tuple[Param, ...]:
        return tuple(self.cls.params)

    @property
    def summary(self) -> str:
        doc = inspect.getdoc(self.cls) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @property
    def identity(self) -> PluginIdentity:
        """Version, algorithm version and source hash: what a stored result of it depends on."""
        return plugin_identity(self.cls, self.origin.distribution, self.origin.version)

    @property
    def version(self) -> str:
        """What makes results of this plugin comparable: its algorithm version (row fingerprints).

        Not its distribution's version: a release that leaves the algorithm alone must keep a CI
        baseline comparable. The full :attr:`identity` decides whether a stored result is reused.
        """
        return self.identity.comparable_token()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "distribution": self.origin.distribution,
            "version": self.origin.version,
            "algorithm_version": str(self.cls.algorithm_version),
            "source_hash": self.identity.source_hash,
            "module": self.cls.__module__,
            "class": self.cls.__qualname__,
            "source": self.origin.source,
            "summary": self.summary,
            "params": [p.describe() for p in self.params],
        }

    def resolve_params(self, given: Mapping[str, Any] | None) -> ResolvedParams:
        return resolve(self.params, given, owner=f"{self.kind} '{self.name}'")


class Registry:
    """All registered plugins of one kind."""

    def __init__(self, kind: str):
        if kind not in KINDS:
            raise ValueError(f"unknown plugin kind {kind!r}")
        self.kind = kind
        self.base = KINDS[kind].base
        self._entries: dict[str, PluginInfo] = {}

    # -- registration -----------------------------------------------------------------------
    def bind(self, origin: Origin) -> BoundRegistry:
        """The view handed to one plugin's hook implementation."""
        return BoundRegistry(self, origin)

    def _register(self, cls: Any, origin: Origin) -> None:
        where = f"{self.kind} plugin from {origin}"
        if not inspect.isclass(cls):
            raise PluginError(f"{where}: register() takes a class, got {cls!r}")
        # The class's own namespace, read before the subclass check so that a class that is not a
        # plugin at all is named by what it calls itself.
        name = next((k.__dict__["name"] for k in cls.__mro__ if "name" in k.__dict__), "")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise PluginError(
                f"{where}: {cls.__qualname__}.name = {name!r} is not a valid plugin name "
                f"(lowercase words joined by hyphens, e.g. 'norm-sub')"
            )
        if not issubclass(cls, self.base):
            raise PluginError(
                f"{where}: {cls.__qualname__} ('{name}') must subclass {self.base.__module__}.{self.base.__qualname__}"
            )
        missing = sorted(cls.__abstractmethods__)
        if missing:
            raise PluginError(f"{where}: {cls.__qualname__} ('{name}') does not implement {', '.join(missing)}")
        problems = (
            _signature_problems(cls, self.base) + check_declaration(cls.params) + self.base.contract_problems(cls)
        )
        if problems:
            raise PluginError(f"{where}: {cls.__qualname__} ('{name}'): " + "; ".join(problems))
        if name in self._entries:
            other = self._entries[name]
            raise PluginError(
                f"duplicate {self.kind} name '{name}': registered by {other.origin} "
                f"({other.cls.__qualname__}) and by {origin} ({cls.__qualname__})"
            )
        self._entries[name] = PluginInfo(name=name, kind=self.kind, cls=cls, origin=origin)

    # -- lookup -----------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[PluginInfo]:
        return iter(sorted(self._entries.values(), key=lambda i: i.name))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def get(self, name: str) -> PluginInfo:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownPluginError(self.kind, name, closest(name, self._entries), self.names()) from None


class BoundRegistry:
    """A registry as seen by one plugin: ``register`` records that plugin as the origin."""

    def __init__(self, registry: Registry, origin: Origin):
        self._registry = registry
        self.origin = origin
        self.kind = registry.kind

    def __repr__(self) -> str:  # what LDPBENCH_TRACE_PLUGINS shows as the hook's argument
        return f"<{self.kind} registry for plugin {self.origin.plugin} ({self.origin})>"

    def register(self, cls: type[Plugin]) -> type[Plugin]:
        """Register a plugin class; returns it, so this also works as a class decorator."""
        self._registry._register(cls, self.origin)
        return cls


def _signature_problems(cls: type, base: type) -> list[str]:
    """Methods whose positional parameters do not match the base class's abstract method."""
    problems = []
    for meth_name in base.__abstractmethods__:
        base_attr = inspect.getattr_static(base, meth_name)
        impl_attr = inspect.getattr_static(cls, meth_name, None)
        if isinstance(base_attr, property) or isinstance(impl_attr, property):
            continue
        if impl_attr is None or not callable(impl_attr):
            continue
        try:
            want = _positional(inspect.signature(base_attr))
            have_sig = inspect.signature(impl_attr)
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_POSITIONAL for p in have_sig.parameters.values()):
            continue
        have = _positional(have_sig)
        required = [
            p
            for p in have_sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if len(have) < len(want) or len(required) > len(want):
            problems.append(
                f"{meth_name}{have_sig} does not match the contract {meth_name}{inspect.signature(base_attr)}"
            )
    return problems


def _positional(sig: inspect.Signature) -> list[inspect.Parameter]:
    return [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
