"""The core hashed into every row's code fingerprint is what the engine imports, derived, not listed.

``ldpbench.loading.identity.core_modules`` starts from every module of the engine package and
follows their ldpbench imports: a module on the path from a cell to its rows cannot be left out of
the hash by forgetting to list it, and a module off that path (the command line, the leaderboard,
reports, the results folder) cannot make stored results stale.
"""

from __future__ import annotations

import pkgutil

import pytest

import ldpbench.engine
from ldpbench.loading import identity


def test_every_engine_module_is_in_the_core():
    core = set(identity.core_modules())
    engine = {f"ldpbench.engine.{m.name}" for m in pkgutil.iter_modules(ldpbench.engine.__path__)}
    assert engine and engine <= core


@pytest.mark.parametrize(
    "module",
    [
        "ldpbench.spec.model",  # Budget.epsilon_value: the epsilon every oracle is built with
        "ldpbench.loading.manager",  # Plugins.create: where constructor arguments are assembled
        "ldpbench.params",  # parameter defaults and coercion
        "ldpbench.types.oracle",  # methods plugins inherit
        "ldpbench.spec.seeding",  # every random stream
        "ldpbench.boundary.values",  # the checks every plugin value passes
    ],
)
def test_modules_the_engine_reaches_are_in_the_core(module):
    assert module in identity.core_modules()


def test_the_core_is_closed_under_the_engines_imports():
    core = set(identity.core_modules())
    for name in core:
        path = identity._module_source(name)
        assert path is not None, f"{name} has no source"
        for imported in identity._imports(name, path, is_package=path.name == "__init__.py"):
            if imported.startswith("ldpbench.") and identity._module_source(imported) is not None:
                assert imported in core, f"{name} imports {imported}, which the core hash leaves out"


def test_presentation_and_the_command_line_are_not_in_the_core():
    core = identity.core_modules()
    off_path = ("ldpbench.cli", "ldpbench.leaderboard", "ldpbench.report", "ldpbench.results", "ldpbench.runner")
    assert not [m for m in core if m.startswith(off_path)]
    assert "ldpbench" not in core  # the package's public surface imports the runner


def test_the_core_identity_is_stable_within_a_process_and_recorded_per_spec():
    first = identity.core_identity()
    assert first == identity.core_identity()
    assert len(first.source_hash) == 16 and first.source_hash != identity.UNAVAILABLE
    assert identity.spec_identities(None, [])[identity.CORE_KEY] == first.as_dict()
