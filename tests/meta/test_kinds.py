"""Each plugin kind is declared once (``ldpbench.types.kinds.KINDS``), and everything else about a
kind agrees with that declaration: the registration hooks, the kit's checks, the scaffold's
examples, the built-ins' folders and entry points, and every ``--kind`` of the command line."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata as md
import inspect
from pathlib import Path

import pytest

import ldpbench.hookspecs as hookspecs
import ldpbench.testing as kit
from ldpbench.cli import build_parser
from ldpbench.loading.registry import Registry
from ldpbench.scaffold import KINDS as SCAFFOLD_KINDS
from ldpbench.scaffold.examples import KindExample
from ldpbench.types import Plugin
from ldpbench.types.kinds import CHECKED_KINDS, KINDS, SCAFFOLDED_KINDS

ROOT = Path(__file__).resolve().parents[2]


def test_every_hook_registers_exactly_one_declared_kind():
    hooks = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("ldpbench_")}
    assert sorted(hooks) == sorted(k.hook for k in KINDS.values())


def test_every_kind_has_its_contract_and_its_rules_on_the_base_class():
    for name, kind in KINDS.items():
        assert kind.name == name and issubclass(kind.base, Plugin)
        assert Registry(name).base is kind.base
        # the registry asks the base class for the kind's rules; a plain subclass breaks none
        assert kind.base.contract_problems(type("Fine", (kind.base,), {})) == []


@pytest.mark.parametrize("kind", CHECKED_KINDS)
def test_every_checked_kind_names_a_checks_module(kind):
    module = KINDS[kind].resolve(KINDS[kind].checks)
    assert dataclasses.is_dataclass(module.CONFIG) and callable(module.applies)
    assert module.CHECKS and all(fn.__name__.startswith("check_") for fn in module.CHECKS)
    if kind != "oracle":  # the oracle's checks are the kit's first; every other kind's say whose they are
        assert all(fn.__name__.startswith(f"check_{kind}_") for fn in module.CHECKS)
    assert callable(getattr(kit, KINDS[kind].kit_function))


@pytest.mark.parametrize("kind", SCAFFOLDED_KINDS)
def test_every_scaffolded_kind_names_its_example(kind):
    assert isinstance(SCAFFOLD_KINDS[kind], KindExample)
    assert SCAFFOLD_KINDS[kind] is KINDS[kind].resolve(KINDS[kind].example)


def test_the_builtins_live_in_their_kinds_folders_and_entry_points():
    folders = {k.folder for k in KINDS.values()}
    present = {p.name for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").is_file()}
    assert present - folders == {"numerics"}, "a plugins/ folder that is no kind's (numerics: shared helpers)"
    dist = md.distribution("ldpbench")
    for ep in (ep for ep in dist.entry_points if ep.group == "ldpbench"):
        folder, _, module = ep.name.partition(".")
        assert folder in folders and ep.value == f"ldpbench_plugins.{folder}.{module}", ep


def _choices(command: str) -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    kind = next(a for a in sub.choices[command]._actions if a.dest == "kind")
    return list(kind.choices)


def test_every_kind_option_of_the_command_line_is_derived():
    assert _choices("plugins") == list(KINDS)
    assert _choices("describe") == list(KINDS)
    assert _choices("check-plugin") == list(CHECKED_KINDS)
    assert _choices("new-plugin") == sorted(SCAFFOLDED_KINDS)
