"""Meta-tests that keep the shipped surface honest (datasette's and pytest's habit).

Every hook of the plugin contract is documented for plugin authors (docs/plugins/reference.md);
every subcommand is listed in the README's command table; public names have one import path.
That every shipped spec validates is tests/system/test_surface.py.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from ldpbench import hookspecs
from ldpbench.cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[2]


SPECS = sorted((ROOT / "specs").glob("*.yaml"))


HOOKS = sorted(name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("ldpbench_"))


def test_there_are_specs_and_hooks_to_check():
    assert len(SPECS) >= 10 and "quickstart.yaml" in {p.name for p in SPECS}
    assert len(HOOKS) == 8


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_for_plugin_authors(hook):
    # in the hooks table of the plugin reference, one row per kind
    reference = (ROOT / "docs" / "plugins" / "reference.md").read_text(encoding="utf-8")
    rows = [line for line in reference.splitlines() if line.startswith("| ")]
    assert any(f"| `{hook}` |" in row for row in rows), f"docs/plugins/reference.md: no table row for `{hook}`"


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_is_in_the_readme(command):
    assert f"`ldpbench {command}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_kits_lazy_reexports_are_exactly_its_public_names():
    # ldpbench.testing lists the kit's names itself so as not to import it with the package
    import ldpbench.testing as kit

    for name, module in kit._PUBLIC.items():
        assert getattr(kit, name) is getattr(importlib.import_module(f"ldpbench.testing.checks.{module}"), name)


def _public_names() -> dict[tuple[str, str], str]:
    """``(defining module, name) -> public module`` of every public name re-exported from elsewhere."""
    import ldpbench

    found = {}
    for public in ("ldpbench", *ldpbench.PUBLIC_MODULES):
        module = importlib.import_module(public)
        for name in getattr(module, "__all__", ()):
            home = getattr(getattr(module, name), "__module__", None)
            if home and home != public and home.startswith("ldpbench"):
                found[(home, name)] = public
    return found


def test_a_public_name_is_imported_by_its_one_path_only():
    # Inside its own package a public name comes from the module that defines it (the package
    # re-exports it); everywhere else (tests, scripts, plugins, the docs' examples) from the path
    # ldpbench/__init__.py declares.
    import ast
    import re
    import subprocess

    public = _public_names()
    assert ("ldpbench.loading.manager", "build_plugins") in public
    files = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True, text=True).stdout
    found = []
    for rel in files.split():
        text = (ROOT / rel).read_text(encoding="utf-8")
        if rel.endswith(".md"):
            text = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    home = public.get((node.module, alias.name))
                    if home and not rel.startswith(home.replace(".", "/") + "/"):
                        found.append(f"{rel}: from {node.module} import {alias.name} (its path is {home})")
    assert found == []


def test_the_names_moved_off_the_top_level_still_import_with_a_warning():
    import ldpbench
    from ldpbench.params import Param
    from ldpbench.types import Oracle

    with pytest.warns(DeprecationWarning, match="ldpbench.types.Oracle"):
        assert ldpbench.Oracle is Oracle
    with pytest.warns(DeprecationWarning, match="ldpbench.params.Param"):
        assert ldpbench.Param is Param
    with pytest.raises(AttributeError):
        ldpbench.NoSuchName  # noqa: B018
