"""Build the plugin manager for one run: discover, load, validate, and register every plugin.

Built-in plugins and third-party plugins come in through the same door, the ``ldpbench``
entry-point group (flake8's way); a plugins directory named with ``--plugins-dir`` adds local
modules. Nothing is loaded at import time: each command builds its own :class:`Plugins`
(pytest builds a ``PytestPluginManager`` per config), so tests can build isolated ones.

Environment switches (pytest / llm style):

- ``LDPBENCH_DISABLE_PLUGIN_AUTOLOAD=1``: load only ldpbench's own built-in entry points.
- ``LDPBENCH_DISABLE_PLUGINS=name,name`` (or the older ``LDPBENCH_BLOCK_PLUGINS``): skip these
  entry points, by entry-point name (``oracles.grr``) or distribution name; ``--disable-plugin
  NAME`` does the same per command (pytest's ``-p no:NAME``). Both go through pluggy's own
  blocking (``PluginManager.set_blocked`` / ``is_blocked``), checked before an entry point is
  imported, as pytest does.
- ``LDPBENCH_TRACE_PLUGINS=1``: write every hook call (which hook, which plugins, what they
  returned) to stderr, with pluggy's tracing (datasette's ``DATASETTE_TRACE_PLUGINS``).

Registration hooks are called through pluggy (``pm.hook...``), so its call order (last registered
first, ``tryfirst``/``trylast``), hook wrappers and tracing apply. Each plugin's implementation is
called on its own (``PluginManager.subset_hook_caller``) so that its registry knows which plugin
is registering, and an installed plugin whose hook raises is skipped without the others.

An installed plugin that fails to load (its import raises, or its registration hook does) does
not take the tool down: it is skipped and recorded in :attr:`Plugins.broken`, ``ldpbench
plugins`` lists it with its error, commands warn about it, and a spec naming a plugin it may have
provided fails validation with that error.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as md
import importlib.util
import os
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

import ldpbench.hookspecs as hookspecs
from ldpbench.errors import ParamError, PluginError, UsageError
from ldpbench.loading.registry import Origin, PluginInfo, Registry
from ldpbench.types import KINDS, Plugin

ENTRY_POINT_GROUP = "ldpbench"
OWN_DISTRIBUTION = "ldpbench"
#: Environment variables listing entry points or distributions not to load (comma-separated).
DISABLE_ENV = "LDPBENCH_DISABLE_PLUGINS"
LEGACY_DISABLE_ENV = "LDPBENCH_BLOCK_PLUGINS"
#: Environment variable that traces every hook call to stderr when set to 1.
TRACE_ENV = "LDPBENCH_TRACE_PLUGINS"


@dataclass(frozen=True)
class BrokenPlugin:
    """An installed plugin that failed to load, skipped so that the others still work."""

    name: str  #: the entry-point name
    value: str  #: what the entry point points at (``module:attr``)
    distribution: str
    version: str
    error: str  #: ``ExcType: message``

    def __str__(self) -> str:
        return f"plugin '{self.name}' ({self.value}) from distribution {self.distribution} {self.version} failed to load: {self.error}"


def disabled_from_env() -> list[str]:
    """The plugin names listed in ``LDPBENCH_DISABLE_PLUGINS`` (and ``LDPBENCH_BLOCK_PLUGINS``)."""
    names = []
    for var in (DISABLE_ENV, LEGACY_DISABLE_ENV):
        names.extend(n.strip() for n in os.environ.get(var, "").split(",") if n.strip())
    return names


@dataclass(frozen=True)
class PluginSource:
    """How a :class:`Plugins` was built, as a worker process can build the same one again (picklable).

    ``extra`` names the modules given to :func:`build_plugins` directly, which a worker imports by
    name; ``unimportable`` the objects given directly that no other process can import (a module
    made at run time, a class, an instance): a worker that must rebuild the plugins refuses with
    :meth:`rebuild`'s error instead of computing with other plugins than the run's.
    """

    plugins_dirs: tuple[str, ...] = ()
    #: names not to load, added to those of the environment (``LDPBENCH_DISABLE_PLUGINS``)
    disabled: tuple[str, ...] = ()
    #: load third-party entry points (None: unless ``LDPBENCH_DISABLE_PLUGIN_AUTOLOAD`` is set)
    autoload: bool | None = None
    extra: tuple[str, ...] = ()
    unimportable: tuple[str, ...] = ()
    #: unique per :func:`build_plugins` call: which :class:`Plugins` object this describes, so a
    #: process that has it uses it, and one that rebuilds it never reuses an older build
    token: str = ""

    def rebuild(self) -> Plugins:
        """Build these plugins again (in a worker process)."""
        if self.unimportable:
            raise PluginError(
                f"plugins given as objects ({', '.join(self.unimportable)}) cannot reach a worker process, "
                "which can only import plugins by module name; give an importable module, a plugins "
                "folder (plugins_dirs / --plugins-dir), or run in this process (executor 'in-process')"
            )
        modules = [importlib.import_module(name) for name in self.extra]
        return build_plugins(self.plugins_dirs, extra=modules, autoload=self.autoload, disabled=self.disabled)


class Plugins:
    """Every registered plugin of a run, by kind, plus the pluggy manager they came through."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        registries: dict[str, Registry],
        origins: list[Origin],
        broken: Sequence[BrokenPlugin] = (),
        source: PluginSource = PluginSource(),
    ):
        self.pm = pm
        self.registries = registries
        self.origins = origins
        #: installed plugins that failed to load (skipped)
        self.broken: tuple[BrokenPlugin, ...] = tuple(broken)
        #: how to build these plugins again in a worker process
        self.source = source

    def broken_note(self) -> str:
        """For an unknown plugin name: which broken plugins might have provided it ("" if none)."""
        if not self.broken:
            return ""
        return " (it may come from a plugin that failed to load: " + "; ".join(str(b) for b in self.broken) + ")"

    def registry(self, kind: str) -> Registry:
        return self.registries[kind]

    def get(self, kind: str, name: str) -> PluginInfo:
        return self.registries[kind].get(name)

    def all(self) -> list[PluginInfo]:
        return [info for kind in KINDS for info in self.registries[kind]]

    def create(self, kind: str, name: str, given: Mapping[str, Any] | None = None, **context: Any) -> Plugin:
        """Instantiate plugin ``name`` of ``kind`` with validated parameters.

        A parameter declared with ``plugin_kind`` (Calibrate's ``prior``) is resolved to an
        instance of that plugin. ``context`` passes construction arguments that are not parameters
        (an oracle's ``d`` and ``epsilon``).
        """
        info = self.get(kind, name)
        values = info.resolve_params(given).values
        for p in info.params:
            if p.plugin_kind and values.get(p.name) is not None:
                try:
                    values[p.name] = self.create(p.plugin_kind, values[p.name])
                except Exception as exc:
                    raise ParamError(f"{kind} '{name}': {exc}", p.name) from exc
        return info.cls(**context, **values)

    def manifest(self) -> list[dict[str, Any]]:
        """JSON-able list of every plugin (``ldpbench plugins --json``, run manifests)."""
        return [info.describe() for info in self.all()]


def build_plugins(
    plugins_dirs: Sequence[str | os.PathLike[str]] = (),
    *,
    extra: Iterable[ModuleType | object] = (),
    autoload: bool | None = None,
    blocked: Iterable[str] | None = None,
    disabled: Iterable[str] = (),
) -> Plugins:
    """Discover and register every plugin for one run.

    :param plugins_dirs: folders whose ``*.py`` files are loaded as plugins (``--plugins-dir``).
    :param extra: plugin objects registered directly (tests; ``ldpbench.testing``).
    :param autoload: load third-party entry points (default: unless
        ``LDPBENCH_DISABLE_PLUGIN_AUTOLOAD`` is set). Built-ins always load.
    :param blocked: entry-point or distribution names to skip (default from
        ``LDPBENCH_DISABLE_PLUGINS`` and ``LDPBENCH_BLOCK_PLUGINS``).
    :param disabled: more names to skip (``--disable-plugin``), added to ``blocked``.
    """
    if autoload is None:
        autoload = not os.environ.get("LDPBENCH_DISABLE_PLUGIN_AUTOLOAD")
    if blocked is None:
        blocked = disabled_from_env()
    blocked = set(blocked) | set(disabled)
    broken: list[BrokenPlugin] = []

    pm = pluggy.PluginManager("ldpbench")
    pm.add_hookspecs(hookspecs)
    if os.environ.get(TRACE_ENV) == "1":
        trace_hooks(pm)
    for name in blocked:
        pm.set_blocked(name)
    origins: dict[str, Origin] = {}

    entry_points = _entry_points()
    # Reading a distribution's name or version parses its METADATA file each time (an email
    # parse, ~3 ms); the entry points of one distribution share its object, so each is read once
    # per call (104 parses -> 2 for the built-ins: a third of a small run's start-up, measured).
    names: dict[int, tuple[str, str]] = {}
    for ep in entry_points:
        dist = ep.dist
        if dist is None:
            dist_name, version = "unknown", "unknown"
        else:
            if id(dist) not in names:
                names[id(dist)] = (dist.metadata["Name"], dist.version)
            dist_name, version = names[id(dist)]
        key = f"{dist_name}:{ep.name}"
        # Before the import: a disabled plugin's code never runs.
        if any(pm.is_blocked(name) for name in (ep.name, dist_name, key)):
            continue
        if not autoload and dist_name != OWN_DISTRIBUTION:
            continue
        try:
            module = ep.load()
        except BaseException as exc:  # noqa: BLE001 - an import may sys.exit() too; skip, never die
            if isinstance(exc, KeyboardInterrupt):
                raise
            broken.append(BrokenPlugin(ep.name, ep.value, dist_name, version, _describe(exc)))
            continue
        if pm.is_registered(module):
            continue
        _register(pm, _hashable(module, key), key)
        # An entry point may name an object in a module (``pkg.mod:plugin``), not a module.
        module_name = module.__name__ if isinstance(module, (ModuleType, type)) else ep.value
        origins[key] = Origin(key, module_name, dist_name, version, "entry-point")

    for folder in plugins_dirs:
        for module, key in _load_dir(Path(folder)):
            _register(pm, module, key)
            origins[key] = Origin(key, module.__name__, f"plugins-dir {folder}", "local", "plugins-dir")

    extra = list(extra)
    for i, obj in enumerate(extra):
        key = extra_name(obj, i)
        _register(pm, _hashable(obj, key), key)
        origins[key] = Origin(key, key, "(registered directly)", "local", "direct")

    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} implements an unknown hook: {exc}") from exc

    registries = {kind: Registry(kind) for kind in KINDS}
    for kind in KINDS.values():
        broken.extend(_call_registration_hook(pm, kind.hook, registries[kind.name], origins))

    if not any(len(r) for r in registries.values()):
        raise PluginError(
            "no ldpbench plugins found: the built-ins register through entry points, so ldpbench "
            "must be installed (run `pip install -e .` in the checkout)"
        )
    source = PluginSource(
        plugins_dirs=tuple(str(Path(d).resolve()) for d in plugins_dirs),
        disabled=tuple(sorted(blocked)),
        autoload=autoload,
        extra=tuple(extra_name(obj, i) for i, obj in enumerate(extra) if importable(obj)),
        unimportable=tuple(extra_name(obj, i) for i, obj in enumerate(extra) if not importable(obj)),
        token=uuid.uuid4().hex,
    )
    return Plugins(pm, registries, list(origins.values()), broken, source)


def trace_hooks(pm: pluggy.PluginManager, write: Any = None) -> None:
    """Write every hook call of ``pm`` (hook, arguments, the plugins called, their results) to
    ``write`` (default: stderr), with pluggy's own tracing."""
    pm.trace.root.setwriter(write or sys.stderr.write)
    pm.enable_tracing()


def extra_name(obj: object, index: int) -> str:
    """The plugin name of an object given to :func:`build_plugins` as ``extra``: a module's or
    class's name (or a namespace's ``__name__``), else ``extra-<index>``."""
    if isinstance(obj, (ModuleType, type)):
        return obj.__name__
    try:  # a namespace standing in for a module (``SimpleNamespace(__name__=...)``)
        name = vars(obj).get("__name__")
    except TypeError:
        name = None
    return name if isinstance(name, str) and name else f"extra-{index}"


def importable(obj: object) -> bool:
    """Whether another process gets ``obj`` by importing its name: a module loaded from a file
    under the name it is imported by."""
    return isinstance(obj, ModuleType) and obj.__spec__ is not None and sys.modules.get(obj.__name__) is obj


def _hashable(obj: object, name: str) -> object:
    """``obj``, or a module holding its attributes when it cannot be hashed (a ``SimpleNamespace``):
    pluggy calls one plugin's hooks apart from the others' through a set of plugins."""
    try:
        hash(obj)
    except TypeError:
        try:
            attributes = vars(obj)
        except TypeError:
            raise PluginError(
                f"plugin {name}: an unhashable object without attributes ({type(obj).__name__})"
            ) from None
        stand_in = ModuleType(name)
        stand_in.__dict__.update(attributes)
        return stand_in
    return obj


def _call_registration_hook(
    pm: pluggy.PluginManager, hook_name: str, registry: Registry, origins: Mapping[str, Origin]
) -> list[BrokenPlugin]:
    """Call one registration hook through pluggy, one plugin at a time in pluggy's call order,
    each with the registry bound to it; return the installed plugins skipped because they raised."""
    impls = [impl for impl in getattr(pm.hook, hook_name).get_hookimpls() if not (impl.hookwrapper or impl.wrapper)]
    plugins = [impl.plugin for impl in impls]
    broken = []
    for impl in reversed(impls):  # pluggy calls the last registered first (tryfirst/trylast apply)
        origin = origins.get(impl.plugin_name) or Origin(impl.plugin_name, impl.plugin_name, "?", "?", "direct")
        others = [p for p in plugins if p is not impl.plugin]
        call = pm.subset_hook_caller(hook_name, remove_plugins=others)
        try:
            call(registry=registry.bind(origin))
        except PluginError:
            raise
        except Exception as exc:
            if origin.source != "entry-point" or origin.distribution == OWN_DISTRIBUTION:
                raise PluginError(f"plugin {origin} raised in {hook_name}: {type(exc).__name__}: {exc}") from exc
            # An installed third-party plugin: skip the rest of it, keep the tool working.
            name = origin.plugin.split(":", 1)[-1]
            broken.append(
                BrokenPlugin(
                    name, origin.module, origin.distribution, origin.version, f"{hook_name} raised {_describe(exc)}"
                )
            )
    return broken


def _describe(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001
        message = "(unprintable)"
    if len(message) > 500:
        message = message[:500] + "..."
    return f"{type(exc).__name__}: {message}"


def _entry_points() -> list[md.EntryPoint]:
    eps = md.entry_points(group=ENTRY_POINT_GROUP)
    # One distribution can appear twice on sys.path (editable + build dir); keep the first.
    seen: set[tuple[str, str]] = set()
    unique = []
    for ep in eps:
        if (ep.name, ep.value) in seen:
            continue
        seen.add((ep.name, ep.value))
        unique.append(ep)
    return unique


def _register(pm: pluggy.PluginManager, obj: object, name: str) -> None:
    try:
        pm.register(obj, name=name)
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {name}: {exc}") from exc
    except ValueError as exc:  # already registered under this name
        raise PluginError(f"plugin {name}: {exc}") from exc


def _load_dir(folder: Path) -> list[tuple[ModuleType, str]]:
    if not folder.is_dir():
        raise UsageError(f"--plugins-dir {folder}: not a directory")
    loaded = []
    # One module namespace per folder: two folders each holding plugin.py are two modules (one
    # name would make folder A's plugin be hashed, and pickled to workers, as folder B's file).
    # Derived from the resolved folder, so a pool worker that loads the folder again agrees.
    tag = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    for path in sorted(folder.glob("*.py")):
        mod_name = f"ldpbench_local_plugins.d{tag}.{path.stem}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise PluginError(f"plugin file {path} failed to load: {type(exc).__name__}: {exc}") from exc
        loaded.append((module, f"plugins-dir:{path}"))
    return loaded
