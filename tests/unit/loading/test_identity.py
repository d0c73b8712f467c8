"""Plugin identity (ldpbench.loading.identity): what a stored result depends on."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from ldpbench.loading.identity import entry_version, plugin_identity, source_files, source_hash


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A plugin package ``idpkg``: ``oracle.py`` uses ``_helper.py``; ``other.py`` is a sibling."""
    root = tmp_path / "idpkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "_helper.py").write_text("def scale(x):\n    return x\n")
    (root / "other.py").write_text("X = 1\n")
    (root / "oracle.py").write_text(
        textwrap.dedent("""\
        import numpy as np
        from ldpbench.types import Oracle
        from ._helper import scale

        class Thing:
            algorithm_version = "3"
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [m for m in sys.modules if m == "idpkg" or m.startswith("idpkg.")]:
        del sys.modules[name]


def test_the_source_hash_covers_the_private_helpers_a_module_imports(package):
    # Reproduction: an edited plugins/oracles/_hashing.py changed OLH's numbers while OLH's own
    # file, and so everything that identified it, stayed the same.
    names = [name for name, _ in source_files("idpkg.oracle")]
    assert names == ["idpkg._helper", "idpkg.oracle"]  # not numpy, ldpbench or the sibling
    before = source_hash("idpkg.oracle")
    (package / "other.py").write_text("X = 2\n")
    assert source_hash("idpkg.oracle") == before  # a module it does not import
    (package / "_helper.py").write_text("def scale(x):\n    return 2 * x\n")
    assert source_hash("idpkg.oracle") != before


def test_an_edit_of_the_module_itself_changes_the_identity(package):
    cls = importlib.import_module("idpkg.oracle").Thing
    before = plugin_identity(cls, "idpkg-dist", "1.0")
    assert (before.version, before.algorithm_version) == ("1.0", "3")
    with open(package / "oracle.py", "a") as fh:
        fh.write("# edited\n")
    after = plugin_identity(cls, "idpkg-dist", "1.0")
    assert after.source_hash != before.source_hash and after.token() != before.token()
    # What compare matches is the algorithm version alone: an edit is what the gate judges.
    assert after.comparable_token() == before.comparable_token() == "alg3"


def test_builtins_are_identified_by_source_not_by_ldpbench_s_version(ldpbench_plugins):
    olh = ldpbench_plugins.get("oracle", "olh")
    identity = olh.identity
    assert identity.distribution == "ldpbench" and identity.version == ""
    assert "ldpbench_plugins.oracles._hashing" in dict(source_files(olh.cls.__module__))
    assert olh.version == "alg" + str(olh.cls.algorithm_version)
    assert olh.describe()["source_hash"] == identity.source_hash


def test_a_prior_family_named_by_a_parameter_is_part_of_the_entry(ldpbench_plugins):
    calibrate = ldpbench_plugins.get("postprocessor", "calibrate")
    values = calibrate.resolve_params({}).values  # the default prior counts too
    version, code = entry_version(ldpbench_plugins, calibrate, values)
    prior = ldpbench_plugins.get("prior", values["prior"])
    assert f"prior:{prior.name}={prior.identity.comparable_token()}" in version
    assert f"prior:{prior.name}={prior.identity.token()}" in code
