"""Plugin identity (ldpbench.loading.identity): what a stored result depends on.

The core hashed into every row's code fingerprint is what the engine imports, derived, not listed:
``ldpbench.loading.identity.core_modules`` starts from every module of the engine package and
follows their ldpbench imports: a module on the path from a cell to its rows cannot be left out of
the hash by forgetting to list it, and a module off that path (the command line, the leaderboard,
reports, the results folder) cannot make stored results stale.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import textwrap

import pytest

import ldpbench.engine
from ldpbench.loading import identity
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


# -- everything that shapes a number (issue 28) ------------------------------------------------


@pytest.mark.parametrize("module", ["ldpbench.spec.model", "ldpbench.loading.manager"])
def test_an_edit_of_a_module_the_engine_imports_changes_the_core_identity(module, monkeypatch):
    """Reproduction (issue 28): Budget.epsilon_value (spec/model.py) and Plugins.create
    (loading/manager.py) change every number; an edit of either must make stored cells stale."""
    edited = identity._module_source(module)
    real = identity._file_digest

    def digest(path, *key):
        return "edited" if path == edited else real(path, *key)

    identity.core_identity.cache_clear()
    try:
        before = identity.core_identity()
        monkeypatch.setattr(identity, "_file_digest", digest)
        identity.core_identity.cache_clear()
        assert identity.core_identity().source_hash != before.source_hash
    finally:
        monkeypatch.undo()
        identity.core_identity.cache_clear()


@pytest.mark.parametrize("name", ["retail.csv.gz", "kosarak-head.csv.gz", "adult.csv", "aol_queries.tsv.gz"])
def test_the_shipped_datasets_are_part_of_their_plugins_identity(ldpbench_plugins, name):
    """Reproduction (issue 28): the shipped histograms read from the package were not hashed, so an
    edited retail.csv.gz served the old numbers on a resumed run."""
    readers = {
        "retail.csv.gz": "retail",
        "kosarak-head.csv.gz": "kosarak-head",
        "adult.csv": "adult",
        "aol_queries.tsv.gz": "aol-queries",
    }
    info = ldpbench_plugins.get("dataset", readers[name])
    sources = [path for module in identity._class_modules(info.cls) for _, path in source_files(module)]
    assert f"ldpbench_data/{name}" in dict(identity.data_files(sources))


@pytest.fixture
def data_package(tmp_path, monkeypatch):
    """A data package ``iddata`` (one CSV) and a plugin module ``iduser`` reading it through
    importlib.resources, with a second file ``counts.txt`` read from beside the module."""
    (tmp_path / "iddata").mkdir()
    (tmp_path / "iddata" / "__init__.py").write_text("")
    (tmp_path / "iddata" / "hist.csv").write_text("item,count\na,1\n")
    (tmp_path / "counts.txt").write_text("1 2 3\n")
    (tmp_path / "iduser.py").write_text(
        textwrap.dedent("""\
        import importlib.resources
        from pathlib import Path

        def load(name):
            raw = importlib.resources.files("iddata").joinpath(f"{name}.csv").read_text()
            return raw + (Path(__file__).parent / "counts.txt").read_text()
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("iddata", "iduser"):
        sys.modules.pop(name, None)
    identity._data_package_files.cache_clear()


def test_an_edited_data_file_a_plugin_reads_changes_its_identity(data_package):
    before = source_hash("iduser")
    (data_package / "iddata" / "hist.csv").write_text("item,count\na,2\n")  # same size: content counts
    after_package = source_hash("iduser")
    (data_package / "counts.txt").write_text("1 2 4\n")
    after_beside = source_hash("iduser")
    assert len({before, after_package, after_beside}) == 3


def test_a_code_package_named_in_a_string_is_not_hashed_as_data(data_package):
    assert identity._data_package_files("numpy") == ()
    assert identity._data_package_files("ldpbench") == ()


def test_a_plugins_dir_helper_beside_the_plugin_is_part_of_its_identity(tmp_path, monkeypatch):
    """Reproduction (issue 28): a --plugins-dir plugin's helper module, imported by name through
    sys.path, was outside its identity: editing it served stale numbers."""
    (tmp_path / "helper_for_id.py").write_text("SCALE = 1\n")
    (tmp_path / "plugin_using_helper.py").write_text("import numpy\nimport helper_for_id\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        names = [name for name, _ in source_files("plugin_using_helper")]
        assert names == ["helper_for_id", "plugin_using_helper"]  # numpy is versioned, not hashed
        before = source_hash("plugin_using_helper")
        (tmp_path / "helper_for_id.py").write_text("SCALE = 2\n")
        assert source_hash("plugin_using_helper") != before
    finally:
        sys.modules.pop("helper_for_id", None)
        sys.modules.pop("plugin_using_helper", None)
