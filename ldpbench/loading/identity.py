"""A plugin's identity: what must be unchanged for a stored result of it to be reused.

Two strings come out of it. :meth:`PluginIdentity.comparable_token` (the algorithm version) goes
into every row's ``fingerprint``, which ``compare`` matches: rows of another algorithm version are
not comparable. :meth:`PluginIdentity.token` (everything below) goes into every row's
``code_fingerprint``, which resume matches: a stored row is reused only if the very same code
produced it. An edit that keeps the algorithm version is what a regression gate exists to judge,
so it leaves rows comparable, but never lets a rerun serve the old numbers.

A result row is only as trustworthy as the code that produced it. Editing a plugin — a built-in
in a checkout, a ``--plugins-dir`` file, an installed distribution — changes its numbers, with or
without a bump of its ``algorithm_version``. The identity of a plugin class is therefore

- its distribution's version, except for ldpbench's own built-ins, whose source is hashed in full
  below (so that a release of ldpbench that leaves a plugin's code alone does not make every
  stored row stale);
- its ``algorithm_version`` (a deliberate change of behavior, also when the source is not at
  hand);
- a hash of its source: the module that defines the class **and**, transitively, every module of
  the same top-level package that module imports by name (``from . import _hashing``,
  ``from ._common import as_counts``). An edited ``plugins/oracles/_hashing.py`` changes OLH's
  numbers, so it changes OLH's identity; a package's ``__init__`` counts only when a module
  imports from it explicitly. A module imported by its top-level name that is a file beside
  its importer (a ``--plugins-dir`` plugin's helper, found through ``sys.path``) counts too.
  Modules of other packages (ldpbench itself, NumPy) are versioned by their distributions and
  are not hashed: the row fingerprint is about the plugin, and the manifest records the
  library versions;
- the data files that source reads (:func:`data_files`): the files of a data package it names
  in a resource call (``importlib.resources.files("ldpbench_data")``, where the shipped
  histograms live) and the files beside it that it names, so that an edited shipped dataset
  makes its stored cells stale as an edited file named by a ``path`` parameter does.

A plugin without readable source (a compiled module) is identified by its version alone, and the
hash reads ``"unavailable"``. The modules of a plugin's base classes are hashed too (a
``--plugins-dir`` subclass of a built-in oracle changes when the built-in does).

ldpbench's own core shapes numbers too: the engine draws the users and the random streams, runs
the simulation, combines budget groups and checks every value at the plugin boundary. Its
version does not change while a checkout is edited, so the engine's modules and every ldpbench
module they import (:func:`core_modules`) are hashed like a plugin's (:func:`core_identity`) and
enter every row's ``code_fingerprint``: an edited engine makes the stored cells stale, with the
reason ``core 'ldpbench' changed (source)``. The rest of ldpbench (the command line, reports, the
leaderboard, the results folder) is never imported by the engine, does not touch a stored
number, and is left out, so editing it keeps stored results.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The distribution whose plugins are hashed in full and identified without its version.
OWN_DISTRIBUTION = "ldpbench"
#: ``source_hash`` of a plugin whose module has no readable source.
UNAVAILABLE = "unavailable"
#: The package whose modules shape every stored number (a cell: population, mechanism,
#: pipelines, metrics, rows). The core identity hashes its modules and, transitively, every
#: ldpbench module they import (:func:`core_modules`): derived from the imports, never a
#: hand-kept list, so that a new import on the engine's path cannot slip past the hash.
CORE_PACKAGE = "ldpbench.engine"
#: How :func:`spec_identities` and manifests name the core.
CORE_KEY = "core 'ldpbench'"
#: How many modules one plugin's source may span before we stop following imports (a guard
#: against a package that imports itself in circles through hundreds of modules).
_MAX_MODULES = 200


@dataclass(frozen=True)
class PluginIdentity:
    """What identifies the code behind a plugin's numbers (see the module docstring)."""

    distribution: str
    version: str  #: the distribution's version ("" for ldpbench's own built-ins)
    algorithm_version: str
    source_hash: str  #: sha256 (16 hex digits) of the defining module and its package helpers

    def token(self) -> str:
        """The whole identity as one string (``Entry.code``): changes with any field."""
        version = f"{self.version}+" if self.version else ""
        return f"{version}alg{self.algorithm_version}+src{self.source_hash}"

    def comparable_token(self) -> str:
        """What makes two results measure the same thing (``Entry.version``): the algorithm
        version alone. An edit of the code or a new release is what a regression gate is for, so
        it must leave rows comparable; a declared change of algorithm must not."""
        return f"alg{self.algorithm_version}"

    def as_dict(self) -> dict[str, str]:
        return {
            "distribution": self.distribution,
            "version": self.version,
            "algorithm_version": self.algorithm_version,
            "source_hash": self.source_hash,
        }


def plugin_identity(cls: type, distribution: str, version: str) -> PluginIdentity:
    """The identity of plugin class ``cls`` registered by ``distribution`` at ``version``."""
    algorithm = str(cls.algorithm_version)
    own = distribution == OWN_DISTRIBUTION
    return PluginIdentity(distribution, "" if own else str(version), algorithm, source_hash(*_class_modules(cls)))


def _class_modules(cls: type) -> list[str]:
    """The modules defining ``cls`` and the classes it inherits from (a ``--plugins-dir`` plugin
    subclassing a built-in changes with it), except ldpbench's own and the standard library's."""
    names = []
    for klass in cls.__mro__:
        top = klass.__module__.split(".", 1)[0]
        if top in (OWN_DISTRIBUTION, "builtins") or top in sys.stdlib_module_names:
            continue
        names.append(klass.__module__)
    return list(dict.fromkeys(names)) or [cls.__module__]


def core_modules() -> list[str]:
    """ldpbench's modules behind every stored number: each module of :data:`CORE_PACKAGE` and,
    transitively, every ldpbench module one of them imports (the spec's data classes, the plugin
    manager that builds plugins from their parameters, the base classes plugins inherit from,
    the plugin boundary ...). Read from the source files, nothing is imported."""
    spec = importlib.util.find_spec(CORE_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    roots = [CORE_PACKAGE] + sorted(
        f"{CORE_PACKAGE}.{path.stem}"
        for folder in folders
        for path in Path(folder).glob("*.py")
        if path.stem != "__init__"
    )
    return sorted({name for root in roots for name, _ in source_files(root)})


@functools.cache
def core_identity() -> PluginIdentity:
    """The identity of ldpbench's core (:func:`core_modules`, their source hashed). Computed once
    per process: the code a process runs is the code it imported, even if a file is edited while
    it runs."""
    digest = hashlib.sha256()
    for name in core_modules():
        path = _module_source(name)
        digest.update(name.encode() + b"\0")
        digest.update((_file_digest(path, *_stat_key(path)) if path else UNAVAILABLE).encode() + b"\0")
    return PluginIdentity(OWN_DISTRIBUTION, "", "", digest.hexdigest()[:16])


def entry_version(plugins: Any, info: Any, values: Mapping[str, Any]) -> tuple[str, str]:
    """``(Entry.version, Entry.code)`` of a spec entry: the comparable and the whole identity of
    its plugin and of every plugin a parameter names (``calibrate: {prior: power-law}``, the
    default included), since a prior family's code changes the post-processor's numbers as much
    as the post-processor's own.

    :param plugins: the :class:`~ldpbench.loading.manager.Plugins` the spec was validated with.
    :param info: the entry's :class:`~ldpbench.loading.registry.PluginInfo`.
    :param values: the entry's parameters with defaults filled in.
    """
    named = [("", info)]
    for param in info.params:
        if param.plugin_kind and isinstance(values.get(param.name), str):
            other = plugins.get(param.plugin_kind, values[param.name])
            named.append((f"{param.plugin_kind}:{other.name}=", other))
    version = ";".join(prefix + i.identity.comparable_token() for prefix, i in named)
    code = ";".join(prefix + i.identity.token() for prefix, i in named)
    return version, code


def source_hash(*module_names: str) -> str:
    """sha256 over the source files of the modules and the package modules they import, and
    over the data files that source reads (:func:`data_files`)."""
    files = sorted({item for name in module_names for item in source_files(name)})
    if not files:
        return UNAVAILABLE
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(name.encode() + b"\0")
        digest.update(_file_digest(path, *_stat_key(path)).encode() + b"\0")
    # Only when there are any: the hash of a plugin that reads no data file stays what it was.
    for label, path in data_files([path for _, path in files]):
        digest.update(b"data\0" + label.encode() + b"\0")
        digest.update(_file_digest(path, *_stat_key(path)).encode() + b"\0")
    return digest.hexdigest()[:16]


#: Data files hashed per package a plugin names: a data package ships a handful of files.
_MAX_DATA_FILES = 256
_PYTHON_SUFFIXES = (".py", ".pyc", ".pyi", ".pyd", ".so")


def data_files(sources: Iterable[Path]) -> list[tuple[str, Path]]:
    """``(label, path)`` of the data files the source files ``sources`` may read, sorted.

    A dataset plugin reads its shipped histogram from a package
    (``importlib.resources.files("ldpbench_data")``) or from a file beside its module
    (``Path(__file__).parent / "counts.csv"``). Such a file changes the numbers as much as the
    code does, so it is part of the identity. Read from the source, nothing is imported: a
    package named by a string constant as the first argument of a resource call
    (:data:`_RESOURCE_CALLS`) brings in every data file of that package (names built at run
    time, ``f"{name}.csv.gz"``, are covered so), and a string constant that names a file beside
    the module brings in that file.
    """
    found: dict[str, Path] = {}
    listings: dict[Path, frozenset[str]] = {}
    for source in sources:
        constants, packages = _string_constants(source, *_stat_key(source))
        folder = source.parent
        if folder not in listings:
            listings[folder] = _names_in(folder)
        # Only a constant that names an entry of the folder can be a file beside the module: one
        # listing per folder instead of a stat per string constant (thousands per run).
        for text in constants:
            if text in listings[folder] and not text.endswith(_PYTHON_SUFFIXES) and _is_file(folder / text):
                found[f"{folder.name}/{text}"] = folder / text
        for package in packages:
            found.update(_data_package_files(package))
    return sorted(found.items())


#: importlib.resources and pkgutil calls whose first argument names the package a file is read from.
_RESOURCE_CALLS = frozenset(
    {"files", "as_file", "open_binary", "open_text", "read_binary", "read_text", "path", "contents", "get_data"}
)


def _names_in(folder: Path) -> frozenset[str]:
    """The names of the entries of ``folder`` (none when it cannot be listed)."""
    try:
        return frozenset(os.listdir(folder))
    except (OSError, ValueError):
        return frozenset()


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _string_constants(path: Path, mtime_ns: int, size: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The short string constants of a source file, and the packages its resource calls name."""
    scan = _scan(path, mtime_ns, size)
    return scan.texts, scan.packages


@dataclass(frozen=True)
class _Scan:
    """What one parse of a source file gives: its ``import`` statements as ``(level, module,
    names)`` (resolved against the importer's package by :func:`_imports_cached`), its short
    string constants and the packages its resource calls name."""

    imports: tuple[tuple[int, str, tuple[str, ...]], ...] = ()
    texts: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1024)
def _scan(path: Path, mtime_ns: int, size: int) -> _Scan:
    """One parse and one walk of a source file for everything the identity reads from it (a file
    used to be parsed twice, for its imports and for its strings: ~0.4 s of each fresh process)."""
    try:
        tree = ast.parse(_read(path, mtime_ns, size))
    except (SyntaxError, ValueError, OSError):
        return _Scan()
    imports: list[tuple[int, str, tuple[str, ...]]] = []
    texts, packages = set(), set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Constant:
            if isinstance(node.value, str) and 0 < len(node.value) <= 200:
                texts.add(node.value)
        elif kind is ast.Call:
            if node.args:
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                first = node.args[0]
                if called in _RESOURCE_CALLS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                    packages.add(first.value)
        elif kind is ast.Import:
            imports.extend((0, alias.name, ()) for alias in node.names)
        elif kind is ast.ImportFrom:
            imports.append((node.level, node.module or "", tuple(alias.name for alias in node.names)))
    clean = tuple(sorted(t for t in texts if "\0" not in t and t.strip() == t))
    return _Scan(tuple(imports), clean, tuple(sorted(packages)))


@functools.cache
def _data_package_files(name: str) -> tuple[tuple[str, Path], ...]:
    """The files of the top-level data package ``name`` (none when it is no such package)."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts) or parts[0] in sys.stdlib_module_names or parts[0] == OWN_DISTRIBUTION:
        return ()
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return ()
    if spec is None or not spec.submodule_search_locations:
        return ()
    out: list[tuple[str, Path]] = []
    for folder in spec.submodule_search_locations:
        try:
            entries = sorted(Path(folder).iterdir())
        except OSError:
            continue
        if any(e.suffix in _PYTHON_SUFFIXES and e.name != "__init__.py" for e in entries):
            return ()  # a code package (numpy ...): versioned by its distribution, not hashed
        out.extend((f"{name}/{e.name}", e) for e in entries if e.suffix not in _PYTHON_SUFFIXES and _is_file(e))
    return tuple(out[:_MAX_DATA_FILES])


def source_files(module_name: str) -> list[tuple[str, Path]]:
    """``(module name, source path)`` of a module and, transitively, the modules of its own
    top-level package that it imports, sorted by name."""
    top = module_name.split(".", 1)[0]
    found: dict[str, Path] = {}
    beside: dict[str, Path] = {}  # helpers found as files next to their importer
    pending = [module_name]
    while pending and len(found) < _MAX_MODULES:
        name = pending.pop()
        if name in found:
            continue
        path = beside.get(name) or _module_source(name)
        if path is None:
            continue
        found[name] = path
        for imported in _imports(name, path, is_package=path.name == "__init__.py"):
            if imported in found:
                continue
            if imported.split(".", 1)[0] == top:
                pending.append(imported)
            elif (helper := _beside(imported, path)) is not None:
                beside[imported] = helper
                pending.append(imported)
    return sorted(found.items())


def _beside(name: str, importer: Path) -> Path | None:
    """The source of module ``name`` if it is a file beside ``importer``: a ``--plugins-dir``
    plugin's helper, imported by its top-level name through ``sys.path`` (``import helpers``),
    shapes its numbers as much as the plugin file does."""
    if "." in name or name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return None
    candidate = importer.parent / f"{name}.py"
    return candidate if _is_file(candidate) else None


def _module_source(name: str) -> Path | None:
    module = sys.modules.get(name)
    filename = getattr(module, "__file__", None) if module is not None else None
    if filename is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return None
        filename = spec.origin if spec is not None else None
    if not filename or not filename.endswith(".py"):
        return None
    path = Path(filename)
    return path if path.is_file() else None


def _imports(name: str, path: Path, is_package: bool) -> list[str]:
    return list(_imports_cached(name, path, is_package, *_stat_key(path)))


@functools.lru_cache(maxsize=1024)
def _imports_cached(name: str, path: Path, is_package: bool, mtime_ns: int, size: int) -> tuple[str, ...]:
    """Absolute names of the modules ``import`` statements of a source file may bring in."""
    package = name if is_package else name.rpartition(".")[0]
    out: list[str] = []
    for level, module, names in _scan(path, mtime_ns, size).imports:
        if not names:  # `import a.b`
            out.append(module)
            continue
        if level:
            base_parts = package.split(".")
            if level - 1 > len(base_parts) - (0 if package else 1):
                continue
            base = ".".join(base_parts[: len(base_parts) - (level - 1)])
            target = f"{base}.{module}" if module else base
        else:
            target = module
        if not target:
            continue
        out.append(target)
        # `from . import _hashing`: each name may be a submodule.
        out.extend(f"{target}.{alias}" for alias in names if alias != "*")
    return tuple(out)


def _stat_key(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=1024)
def _read(path: Path, mtime_ns: int, size: int) -> bytes:
    # Keyed by mtime and size: an edited file is read again, an unchanged one once per process.
    return path.read_bytes()


@functools.lru_cache(maxsize=1024)
def _file_digest(path: Path, mtime_ns: int, size: int) -> str:
    try:
        return hashlib.sha256(_read(path, mtime_ns, size)).hexdigest()
    except OSError:
        return UNAVAILABLE


def content_hash(path: str | Path) -> str:
    """sha256 (16 hex digits) of a data file a spec names, so that a dataset file edited in place
    makes its stored cells stale (re-read only when its size or modification time changes)."""
    p = Path(path)
    return _file_digest(p, *_stat_key(p))[:16]


# ----------------------------------------------------------------------------------------------
# The plugins of one spec
# ----------------------------------------------------------------------------------------------


def entry_plugins(plugins: Any, entry: Any) -> list[Any]:
    """The :class:`~ldpbench.loading.registry.PluginInfo` of a spec entry and of every plugin one of its
    parameters names (a prior family), the defaults included."""
    info = plugins.get(entry.kind, entry.name)
    out = [info]
    values = info.resolve_params(dict(entry.params)).values
    for param in info.params:
        if param.plugin_kind and isinstance(values.get(param.name), str):
            out.append(plugins.get(param.plugin_kind, values[param.name]))
    return out


def plugin_key(info: Any) -> str:
    """How manifests and messages name a plugin: ``oracle 'grr'``."""
    return f"{info.kind} '{info.name}'"


def spec_identities(plugins: Any, entries: Iterable[Any]) -> dict[str, dict[str, str]]:
    """``plugin_key -> identity`` of every plugin the entries use, and of ldpbench's core under
    :data:`CORE_KEY` (recorded in the manifest)."""
    out: dict[str, dict[str, str]] = {CORE_KEY: core_identity().as_dict()}
    for entry in entries:
        for info in entry_plugins(plugins, entry):
            out[plugin_key(info)] = info.identity.as_dict()
    return out


def identity_changes(old: Mapping[str, Any], new: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """``plugin_key -> "oracle 'grr' changed (source)"`` for each plugin whose identity differs
    between an earlier run's manifest (``old``) and now; plugins new to this run are left out."""
    changes = {}
    for key, now in new.items():
        before = old.get(key)
        if not isinstance(before, Mapping):
            continue
        what = []
        if before.get("version") != now["version"]:
            what.append(f"version {before.get('version') or '-'} -> {now['version'] or '-'}")
        if before.get("algorithm_version") != now["algorithm_version"]:
            what.append(f"algorithm_version {before.get('algorithm_version')} -> {now['algorithm_version']}")
        if before.get("source_hash") != now["source_hash"]:
            what.append("source")
        if what:
            changes[key] = f"{key} changed ({', '.join(what)})"
    return changes
