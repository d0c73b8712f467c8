"""The built-ins come in through the entry points: every plugin module must be listed."""

from __future__ import annotations

import importlib.metadata as md
import pkgutil

import ldpbench_plugins
from ldpbench.types import KINDS


def _declared() -> dict[str, str]:
    dist = md.distribution("ldpbench")
    return {ep.name: ep.value for ep in dist.entry_points if ep.group == "ldpbench"}


def _hook_modules() -> set[str]:
    """Every public module under ldpbench_plugins that implements an ldpbench hook."""
    found = set()
    for info in pkgutil.walk_packages(ldpbench_plugins.__path__, prefix="ldpbench_plugins."):
        leaf = info.name.rsplit(".", 1)[-1]
        if leaf.startswith("_") or info.ispkg:
            continue
        module = __import__(info.name, fromlist=["_"])
        if any(name.startswith("ldpbench_register_") for name in vars(module)):
            found.add(info.name)
    return found


def test_every_builtin_plugin_module_is_an_entry_point():
    declared = set(_declared().values())
    missing = _hook_modules() - declared
    assert not missing, f"plugin modules missing from [project.entry-points.ldpbench]: {sorted(missing)}"


def test_every_entry_point_registers_something(plugins):
    modules_with_plugins = {info.cls.__module__ for info in plugins.all()}
    empty = set(_declared().values()) - modules_with_plugins
    assert not empty, f"entry points that register no plugin: {sorted(empty)}"


def test_every_kind_has_a_builtin(plugins):
    for kind in KINDS:
        assert len(plugins.registry(kind)) > 0, f"no built-in {kind}"
