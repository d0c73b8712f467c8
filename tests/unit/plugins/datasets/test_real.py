"""Real datasets (plugins/datasets/real.py): the shipped FIMI histograms, a user's FIMI file, and the full-Kosarak plugin."""

from __future__ import annotations

import gzip
import hashlib
import lzma
from importlib import resources

import numpy as np
import pytest

from ldpbench.errors import UsageError
from ldpbench_plugins.datasets import real
from ldpbench_plugins.datasets._fimi import git_blob_sha1

RNG = np.random.default_rng(0)


def load(plugins, name, params=None):
    return plugins.create("dataset", name, params or {}).load(RNG)


def test_retail_is_complete(plugins):
    pop = load(plugins, "retail")
    assert (pop.n, pop.d) == (908_577, 16_470)
    assert pop.info["partial"] is False
    top = np.argsort(-pop.counts)[:5]
    assert [pop.labels[i] for i in top] == ["39", "48", "38", "32", "41"]
    assert pop.counts[top[0]] == 50_675


def test_kosarak_head_is_labelled_partial(plugins):
    pop = load(plugins, "kosarak-head")
    assert (pop.n, pop.d) == (294_009, 17_034)
    assert pop.info["partial"] is True
    assert "partial" in pop.name.lower() and "partial" in pop.info["source"].lower()
    assert pop.counts[pop.labels.index("6")] == 22_238


@pytest.mark.parametrize("name", ["retail", "kosarak-head"])
def test_provenance_note_matches_the_shipped_file(name):
    note = real.provenance(name)
    raw = resources.files("ldpbench_data").joinpath(f"{name}.csv.gz").read_bytes()
    assert hashlib.sha256(raw).hexdigest() in note
    for word in ("Origin", "Citation", "Terms", "sha256", "Statistics"):
        assert word in note
    counts, _ = real.shipped_histogram(name)
    assert f"users n (item occurrences): {counts.sum():,}" in note
    if name == "kosarak-head":
        assert "PARTIAL" in note


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_fimi_plugin_reads_a_user_file(plugins, tmp_path, suffix):
    data = b"3 5\n5 7 3\n5\n"
    path = tmp_path / f"t.dat{suffix}"
    opener = {"": open, ".gz": gzip.open, ".xz": lzma.open}[suffix]
    with opener(path, "wb") as fh:
        fh.write(data)
    pop = load(plugins, "fimi", {"path": str(path)})
    assert pop.labels == ["3", "5", "7"] and pop.counts.tolist() == [2, 3, 1]
    full = load(plugins, "fimi", {"path": str(path), "domain": "id-range"})
    assert full.d == 8 and full.counts[5] == 3 and full.counts[0] == 0


def test_fimi_missing_file(plugins, tmp_path):
    with pytest.raises(UsageError, match="not found"):
        load(plugins, "fimi", {"path": str(tmp_path / "nope.dat")})


def test_kosarak_missing_says_where_to_get_it(plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPBENCH_CACHE", str(tmp_path))
    with pytest.raises(UsageError) as err:
        load(plugins, "kosarak")
    text = str(err.value)
    assert "fimi.uantwerpen.be" in text and str(tmp_path) in text and "kosarak-head" in text


def test_kosarak_rejects_a_wrong_copy(plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPBENCH_CACHE", str(tmp_path))
    (tmp_path / "kosarak.dat").write_bytes(b"1 2 3\n1\n")
    with pytest.raises(UsageError, match="not the canonical kosarak.dat"):
        load(plugins, "kosarak")
    pop = load(plugins, "kosarak", {"verify": False})
    assert pop.n == 4 and "unverified" in pop.name


def test_kosarak_accepts_a_verified_copy(plugins, tmp_path, monkeypatch):
    # Stand in for the canonical file: a tiny file whose checksum and counts we declare canonical.
    data = b"1 2 3\n1\n4 5 6 7\n"
    path = tmp_path / "kosarak.dat.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(data)
    monkeypatch.setattr(real, "KOSARAK_BLOB_SHA1", git_blob_sha1(data))
    monkeypatch.setattr(real, "KOSARAK_STATS", {"transactions": 3, "n": 8, "d": 7})
    pop = load(plugins, "kosarak", {"path": str(path)})
    assert pop.n == 8 and pop.d == 7 and pop.info["verified"] is True
    monkeypatch.setattr(real, "KOSARAK_STATS", {"transactions": 3, "n": 9, "d": 7})
    with pytest.raises(UsageError, match="expected"):
        load(plugins, "kosarak", {"path": str(path)})
