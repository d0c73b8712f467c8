"""The core modules hashed into every row's code fingerprint are the ones that shape its numbers.

``ldpbench.loading.identity.CORE_MODULES`` lists ldpbench's modules on the path from a cell to its rows.
A module one of them imports either shapes numbers too (it belongs in the list) or is named here
with the reason it does not: a new import on the engine's path cannot slip past the hash.
"""

from __future__ import annotations

from ldpbench.loading import identity

#: ldpbench modules the core imports that never change a stored number, and why.
NOT_NUMERIC = {
    "ldpbench": "the package's public names",
    "ldpbench.boundary.guard": "time limits and interrupts: a cell either finishes or fails",
    "ldpbench.errors": "exception classes",
    "ldpbench.boundary.failures": "the text and location of a failure",
    "ldpbench.loading.identity": "this hash itself",
    "ldpbench.leaderboard.table": "number formatting for the theory notes",
    "ldpbench.loading.manager": "finds plugins; their code is hashed by their own identity",
    "ldpbench.util.suggest": "did-you-mean hints in error messages",
    "ldpbench.spec.model": "the spec's data classes; their labels and parameters are in the fingerprint",
    "ldpbench.types": "re-exports of the types modules (hashed one by one)",
}


def test_every_ldpbench_module_the_core_imports_is_hashed_or_named_harmless():
    unaccounted = {}
    for name in identity.CORE_MODULES:
        path = identity._module_source(name)
        assert path is not None, f"{name} has no source"
        for imported in identity._imports(name, path, is_package=path.name == "__init__.py"):
            if not imported.startswith("ldpbench"):
                continue
            # `from .types import Estimate` lists `ldpbench.types.Estimate` too: keep modules only.
            if identity._module_source(imported) is None:
                continue
            if imported not in identity.CORE_MODULES and imported not in NOT_NUMERIC:
                unaccounted.setdefault(imported, []).append(name)
    assert not unaccounted, f"ldpbench modules imported by the core, neither hashed nor named harmless: {unaccounted}"


def test_the_core_identity_is_stable_within_a_process_and_recorded_per_spec():
    first = identity.core_identity()
    assert first == identity.core_identity()
    assert len(first.source_hash) == 16 and first.source_hash != identity.UNAVAILABLE
    assert identity.spec_identities(None, [])[identity.CORE_KEY] == first.as_dict()
