"""Every file that shapes a number is part of an identity (issue 28): edit each, see it change.

Each stored result is reused only while the identities it was computed with are unchanged
(ldpbench.loading.identity). This family edits, one at a time, every module the engine imports
(the core identity), and every shipped data file a built-in dataset reads from the package (its
plugin's identity), and checks that the identity moves: before the fix, spec/model.py,
pluginmanager.py and the four shipped datasets could be edited and a resumed run served the old
numbers. An edit is simulated by changing the file's digest as the identity reads it, so that no
file of the checkout is touched.
"""

from __future__ import annotations

import pytest

from ldpbench.loading import identity

CORE = identity.core_modules()
SHIPPED = {
    "retail.csv.gz": "retail",
    "kosarak-head.csv.gz": "kosarak-head",
    "adult.csv": "adult",
    "aol_queries.tsv.gz": "aol-queries",
}


def _edited(monkeypatch, path):
    """Make ``path`` read as edited (its digest changes), nothing else."""
    real = identity._file_digest

    def digest(p, *key):
        return "edited" if p == path else real(p, *key)

    monkeypatch.setattr(identity, "_file_digest", digest)


@pytest.mark.parametrize("module", CORE)
def test_an_edit_of_any_module_the_engine_imports_changes_the_core_identity(module, monkeypatch):
    identity.core_identity.cache_clear()
    try:
        before = identity.core_identity().source_hash
        _edited(monkeypatch, identity._module_source(module))
        identity.core_identity.cache_clear()
        assert identity.core_identity().source_hash != before
    finally:
        monkeypatch.undo()
        identity.core_identity.cache_clear()


@pytest.mark.parametrize(("name", "dataset"), list(SHIPPED.items()))
def test_an_edit_of_a_shipped_dataset_changes_its_plugin_identity(name, dataset, ldpbench_plugins, monkeypatch):
    info = ldpbench_plugins.get("dataset", dataset)
    modules = identity._class_modules(info.cls)
    before = identity.source_hash(*modules)
    sources = [path for module in modules for _, path in identity.source_files(module)]
    path = dict(identity.data_files(sources))[f"ldpbench_data/{name}"]
    _edited(monkeypatch, path)
    assert identity.source_hash(*modules) != before


def test_a_dataset_that_reads_no_data_keeps_its_identity_when_one_is_edited(ldpbench_plugins, monkeypatch):
    zipf = ldpbench_plugins.get("dataset", "zipf")
    modules = identity._class_modules(zipf.cls)
    before = identity.source_hash(*modules)
    sources = [
        path
        for name in identity._class_modules(ldpbench_plugins.get("dataset", "retail").cls)
        for _, path in identity.source_files(name)
    ]
    _edited(monkeypatch, dict(identity.data_files(sources))["ldpbench_data/retail.csv.gz"])
    assert identity.source_hash(*modules) == before


def test_case_counts():
    assert len(CORE) >= 30 and len(SHIPPED) == 4
