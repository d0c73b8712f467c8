"""Meta-tests that keep the shipped surface honest (datasette's and pytest's habit).

Every shipped spec validates; every hook of the plugin contract is documented for plugin authors
(docs/plugins/reference.md); every subcommand is listed in the README's command table.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from ldpbench import hookspecs
from ldpbench.cli import SUBCOMMANDS
from ldpbench.spec.validate import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
HOOKS = sorted(name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("ldpbench_"))


def test_there_are_specs_and_hooks_to_check():
    assert len(SPECS) >= 10 and "quickstart.yaml" in {p.name for p in SPECS}
    assert len(HOOKS) == 7


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_every_shipped_spec_validates(spec, plugins):
    # results go to results/<name>/ by default, so a spec's name matches its file's
    assert load_spec(spec, plugins).name == spec.stem


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
    from ldpbench.testing import checks

    assert list(kit._CHECKS) == list(checks.__all__)
    assert all(getattr(kit, name) is getattr(checks, name) for name in checks.__all__)
