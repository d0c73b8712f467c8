"""ResultsStore (ldpbench/results/store.py): atomic appends, torn lines, schema versions, de-duplication, resume, manifest."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import polars as pl
import pytest

from ldpbench.engine.rows import COLUMNS, SCHEMA, empty_frame
from ldpbench.errors import ExitCode, LdpbenchError
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.status import cell_status
from ldpbench.results.store import ResultsStore, ResultsWarning
from ldpbench.results.versioning import SCHEMA_VERSION, ResultsSchemaError
from support import done_cells, strict_loads


KEYS = [("base", "mse"), ("norm-sub", "mse"), ("base", "l1")]


def row(cell="c0", pipeline="base", metric="mse", value=0.5, error=None, **kw):
    out = dict(
        cell_id=cell,
        dataset="zipf",
        users="",
        epsilon=1.0,
        oracle="grr",
        pipeline=pipeline,
        metric=metric,
        greater_is_better=False,
        repeat=0,
        value=value,
        error=error,
        simulation="aggregate",
        n=1000,
        d=16,
        fingerprint="f1",
        elapsed=0.01,
    )
    out.update(kw)
    return out



def cell_rows(cell, value=0.5, error=None, **kw):
    return [row(cell, p, m, value=value, error=error, **kw) for p, m in KEYS]



# -- writing and reading -----------------------------------------------------------------------


def test_load_of_missing_store_is_empty_with_the_fixed_schema(tmp_path):
    df = ResultsStore(tmp_path / "nope").load()
    assert df.shape == (0, len(SCHEMA))
    assert dict(df.schema) == SCHEMA
    assert dict(empty_frame().schema) == SCHEMA


def test_append_round_trips_values_and_dtypes(tmp_path):
    store = ResultsStore(tmp_path / "run" / "deep")  # parents are created
    rows = [
        row("a", value=np.float64(0.25), n=np.int64(1000), d=np.int64(16)),
        row("b", value=math.nan, error="ValueError: boom"),
        row("c", epsilon=math.inf, value=1e-300),
        row("d", epsilon=math.nan, users="N=1070"),
    ]
    store.append(rows)
    df = store.load()
    assert dict(df.schema) == SCHEMA
    assert df["cell_id"].to_list() == ["a", "b", "c", "d"]
    values = df["value"].to_list()
    assert values[0] == 0.25 and math.isnan(values[1]) and values[2] == 1e-300
    eps = df["epsilon"].to_list()
    assert eps[2] == math.inf and math.isnan(eps[3])
    assert df["value"].null_count() == 0 and df["epsilon"].null_count() == 0  # NaN, not null
    assert df["error"].to_list() == [None, "ValueError: boom", None, None]
    assert df["n"].to_list() == [1000] * 4


def test_file_is_strict_json_lines_with_a_header_first(tmp_path):
    store = ResultsStore(tmp_path)
    store.append([row("a", value=math.nan, epsilon=math.inf)])
    store.append([row("b")])
    lines = store.path.read_text().splitlines()
    assert strict_loads(lines[0]) == {"schema_version": SCHEMA_VERSION, "kind": "ldpbench-results"}
    assert len(lines) == 3  # one header, however many appends
    first = strict_loads(lines[1])
    assert first["value"] is None and first["epsilon"] == math.inf
    assert list(first)[: len(COLUMNS)] == list(COLUMNS)


def test_one_cell_is_one_write(tmp_path, monkeypatch):
    calls = []
    real_write = os.write

    def counting_write(fd, data):
        calls.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr("ldpbench.results.store.os.write", counting_write)
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a"))
    store.append(cell_rows("b"))
    assert len(calls) == 2
    assert len(store.load()) == 2 * len(KEYS)


def test_append_of_nothing_creates_no_file(tmp_path):
    store = ResultsStore(tmp_path)
    store.append([])
    assert not store.exists()


def test_append_rejects_a_row_without_every_column(tmp_path):
    bad = row("a")
    del bad["fingerprint"]
    with pytest.raises(ValueError, match="fingerprint"):
        ResultsStore(tmp_path).append([bad])


def test_extra_keys_are_kept_in_the_file_but_not_in_the_frame(tmp_path):
    store = ResultsStore(tmp_path)
    store.append([row("a", seed=42)])
    assert strict_loads(store.path.read_text().splitlines()[1])["seed"] == 42
    assert list(store.load().columns) == list(SCHEMA)


# -- torn lines --------------------------------------------------------------------------------


def test_truncated_last_line_is_ignored_with_a_warning(tmp_path):
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a"))
    store.append(cell_rows("b"))
    data = store.path.read_bytes()
    store.path.write_bytes(data[:-20])  # kill mid-write: the last line is torn
    with pytest.warns(ResultsWarning, match="skipped 1"):
        df = store.load()
    assert store.skipped_lines == 1
    assert len(df) == 2 * len(KEYS) - 1
    # the torn cell is not done, so a rerun redoes it
    with pytest.warns(ResultsWarning):
        assert done_cells(store, KEYS) == {"a"}


def test_append_after_a_torn_line_keeps_the_new_rows_whole(tmp_path):
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a"))
    store.path.write_bytes(store.path.read_bytes()[:-7])
    store.append(cell_rows("a", value=0.75))  # the resumed run redoes cell a
    with pytest.warns(ResultsWarning):
        df = store.load()
    assert store.skipped_lines == 1
    assert df["value"].to_list() == [0.75] * len(KEYS)
    with pytest.warns(ResultsWarning):
        assert done_cells(store, KEYS) == {"a"}


def test_a_torn_header_means_an_empty_store_that_can_be_appended_to(tmp_path):
    store = ResultsStore(tmp_path)
    store.path.write_bytes(b'{"schema_ver')
    with pytest.warns(ResultsWarning):
        assert store.load().is_empty()
    store.append(cell_rows("a"))
    assert len(store.load()) == len(KEYS)
    assert store.skipped_lines == 0


# -- schema versions ---------------------------------------------------------------------------


def _write_header(store, header):
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path.write_text(json.dumps(header) + "\n" + json.dumps(row("a")) + "\n")


def test_a_newer_schema_says_update_ldpbench(tmp_path):
    store = ResultsStore(tmp_path)
    _write_header(store, {"schema_version": SCHEMA_VERSION + 1, "kind": "ldpbench-results"})
    with pytest.raises(ResultsSchemaError, match="newer.*update ldpbench") as info:
        store.load()
    assert info.value.exit_code == ExitCode.USAGE
    with pytest.raises(ResultsSchemaError):  # and it is never appended to
        store.append(cell_rows("b"))


def test_an_older_schema_says_rerun(tmp_path):
    store = ResultsStore(tmp_path)
    _write_header(store, {"schema_version": SCHEMA_VERSION - 1, "kind": "ldpbench-results"})
    with pytest.raises(ResultsSchemaError, match="older.*rerun"):
        store.load()


def test_a_file_without_header_is_refused(tmp_path):
    store = ResultsStore(tmp_path)
    store.path.write_text(json.dumps(row("a")) + "\n")
    with pytest.raises(ResultsSchemaError, match="not an ldpbench results file"):
        store.load()


def test_a_header_of_another_kind_is_refused(tmp_path):
    store = ResultsStore(tmp_path)
    _write_header(store, {"schema_version": SCHEMA_VERSION, "kind": "asv-results"})
    with pytest.raises(ResultsSchemaError, match="kind"):
        store.load()


# -- de-duplication and resume -----------------------------------------------------------------


def test_a_rerun_supersedes_a_failed_cell_and_keeps_its_place(tmp_path):
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a", value=math.nan, error="RuntimeError: flaky"))
    store.append(cell_rows("b", value=0.1))
    store.append(cell_rows("a", value=0.2))  # the rerun
    df = store.load()
    assert len(df) == 2 * len(KEYS)
    assert df["cell_id"].to_list() == ["a"] * 3 + ["b"] * 3  # "a" stays first (spec order)
    assert df.filter(pl.col("cell_id") == "a")["value"].to_list() == [0.2] * 3
    assert df["error"].null_count() == len(df)


def test_done_cells_needs_every_expected_row_without_error(tmp_path):
    store = ResultsStore(tmp_path)
    store.append(cell_rows("ok"))
    store.append(cell_rows("failed", value=math.nan, error="ValueError: x"))
    store.append([row("partial", "base", "mse")])
    mixed = cell_rows("one-bad")
    mixed[1] = row("one-bad", *KEYS[1], value=math.nan, error="ValueError: y")
    store.append(mixed)
    assert done_cells(store, KEYS) == {"ok"}
    assert done_cells(store, [("base", "mse")]) == {"ok", "partial", "one-bad"}
    # per-cell expectations: only the listed cells are considered
    assert done_cells(store, {"partial": [("base", "mse")], "ok": KEYS, "ghost": KEYS}) == {"partial", "ok"}
    assert done_cells(ResultsStore(tmp_path / "empty"), KEYS) == set()


# -- manifest, parquet, JSON -------------------------------------------------------------------


def test_manifest_round_trip_is_atomic_and_versioned(tmp_path):
    store = ResultsStore(tmp_path / "run")
    manifest = {
        "spec": {"epsilons": [0.5, math.inf]},
        "seed": 7,
        "plugins": [{"name": "grr", "version": "0.1"}],
    }
    store.write_manifest(manifest)
    store.write_manifest({**manifest, "seed": 8})  # overwrite in place
    back = store.read_manifest()
    assert back["schema_version"] == SCHEMA_VERSION and back["seed"] == 8
    assert back["spec"]["epsilons"] == [0.5, math.inf]
    strict_loads(store.manifest_path.read_text())
    assert sorted(p.name for p in store.directory.iterdir()) == ["manifest.json"]  # no temp left


def test_read_manifest_errors_are_user_errors(tmp_path):
    store = ResultsStore(tmp_path)
    with pytest.raises(LdpbenchError, match="no run manifest"):
        store.read_manifest()
    store.manifest_path.write_text("{not json")
    with pytest.raises(LdpbenchError, match="not valid JSON"):
        store.read_manifest()
    store.manifest_path.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ResultsSchemaError, match="update ldpbench"):
        store.read_manifest()


def test_export_parquet_matches_load_without_the_internal_columns(tmp_path):
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a") + [row("b", value=math.nan, error="E: e", epsilon=math.nan)])
    out = store.export_parquet(tmp_path / "r.parquet")
    back = pl.read_parquet(out)
    assert list(back.columns) == list(COLUMNS)
    assert back.equals(store.load().select(list(COLUMNS)))


def test_a_rerun_of_a_protocol_cell_supersedes_rows_with_other_labels(tmp_path):
    store = ResultsStore(tmp_path)
    # the protocol failed: one "blender" row per (pipeline, metric)
    store.append(cell_rows("p", value=math.nan, error="ValueError: no opt-in users", oracle="blender"))
    store.append(cell_rows("q"))
    # the rerun succeeds: one row per protocol output and (pipeline, metric)
    store.append([r for out in ("blender:blended", "blender:client") for r in cell_rows("p", oracle=out)])
    df = store.load()
    p_rows = df.filter(pl.col("cell_id") == "p")
    assert sorted(set(p_rows["oracle"])) == ["blender:blended", "blender:client"]
    assert len(p_rows) == 2 * len(KEYS) and p_rows["error"].null_count() == len(p_rows)
    assert df["cell_id"].to_list()[0] == "p"  # where the cell first appeared
    assert done_cells(store, KEYS) == {"p", "q"}


def test_hand_written_rows_without_append_ids_supersede_by_contiguous_run(tmp_path):
    store = ResultsStore(tmp_path)
    lines = [
        {"schema_version": SCHEMA_VERSION, "kind": "ldpbench-results"},
        row("a", value=math.nan, error="E: x", oracle="old"),
        row("b", value=1.0),
        row("a", value=2.0),
        row("a", value=3.0),
    ]  # the last run of "a"; a repeated key keeps the last
    store.path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    df = store.load()
    assert list(zip(df["cell_id"], df["oracle"], df["value"])) == [("a", "grr", 3.0), ("b", "grr", 1.0)]


def test_a_foreign_file_is_never_truncated(tmp_path):
    store = ResultsStore(tmp_path)
    store.path.write_bytes(b"some other tool's data without a newline")
    with pytest.raises(ResultsSchemaError):
        store.append(cell_rows("a"))
    with pytest.raises(ResultsSchemaError):
        store.load()
    assert store.path.read_bytes() == b"some other tool's data without a newline"


def test_a_hand_edited_value_of_the_wrong_type_is_a_clear_error(tmp_path):
    store = ResultsStore(tmp_path)
    lines = [{"schema_version": SCHEMA_VERSION, "kind": "ldpbench-results"}, row("a", value="oops")]
    store.path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(ResultsSchemaError, match="wrong type"):
        store.load()


def test_read_for_run_refuses_other_schemas_and_writes_nothing(tmp_path):
    # A run calls this before it writes its manifest: every refusal leaves the folder as it was.
    fresh = ResultsStore(tmp_path / "fresh")
    fresh.read_for_run()  # nothing there yet: fine, and still nothing there
    assert not fresh.directory.exists()
    torn = ResultsStore(tmp_path / "torn")
    torn.directory.mkdir()
    torn.path.write_text('{"schema_ver')  # killed during the very first write: counts as empty
    with pytest.warns(ResultsWarning, match="skipped 1"):
        assert torn.read_for_run().rows.is_empty()

    newer = ResultsStore(tmp_path / "newer")
    _write_header(newer, {"schema_version": SCHEMA_VERSION + 1, "kind": "ldpbench-results"})
    with pytest.raises(ResultsSchemaError, match="newer.*update ldpbench"):
        newer.read_for_run()
    older = ResultsStore(tmp_path / "older")
    _write_header(older, {"schema_version": SCHEMA_VERSION - 1, "kind": "ldpbench-results"})
    with pytest.raises(ResultsSchemaError, match="older.*rerun"):
        older.read_for_run()

    # A newer manifest alone also means a newer ldpbench owns the folder; an older or broken one
    # beside no results is simply rewritten by the run.
    owned = ResultsStore(tmp_path / "owned")
    owned.directory.mkdir()
    owned.manifest_path.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ResultsSchemaError, match="manifest.json: manifest has schema version .* newer"):
        owned.read_for_run()
    owned.manifest_path.write_text(json.dumps({"schema_version": SCHEMA_VERSION - 1}))
    owned.read_for_run()
    owned.manifest_path.write_text("{not json")
    owned.read_for_run()


# -- integrity and bounded reads (issue 28) ----------------------------------------------------


def test_every_row_carries_a_checksum_of_its_text(tmp_path):
    from ldpbench.results.store import CHECKSUM_KEY, row_checksum_ok

    store = ResultsStore(tmp_path)
    store.append(cell_rows("a"))
    lines = store.path.read_bytes().split(b"\n")[1:-1]
    assert len(lines) == len(KEYS) and all(row_checksum_ok(line) for line in lines)
    assert list(strict_loads(lines[0].decode()))[-1] == CHECKSUM_KEY
    assert CHECKSUM_KEY not in store.load().columns


def test_every_single_bit_flip_in_a_stored_row_is_loud(tmp_path):
    """Reproduction (issue 28): 3 of 40 random bit flips in results.jsonl changed a served mean
    without a warning. Flip every bit of one row's value (and some elsewhere): none is silent."""
    from ldpbench.results.store import CorruptRowsWarning

    store = ResultsStore(tmp_path)
    store.append(cell_rows("a", value=0.123456))
    clean = store.path.read_bytes()
    expected = store.load()
    start = clean.index(b"0.123456")
    positions = list(range(start, start + 8)) + list(range(clean.index(b"\n") + 1, len(clean) - 1, 97))
    silent = []
    for pos in positions:
        for bit in range(8):
            flipped = bytearray(clean)
            flipped[pos] ^= 1 << bit
            store.path.write_bytes(bytes(flipped))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    frame = store.load()
                except (ResultsSchemaError, LdpbenchError):
                    continue  # loud too
            loud = any(issubclass(w.category, ResultsWarning) for w in caught)
            if not loud and not frame.equals(expected):
                silent.append((pos, bit))
            if any(issubclass(w.category, CorruptRowsWarning) for w in caught):
                assert store.corrupt_rows >= 1
    assert silent == []


def test_a_row_with_a_bad_checksum_is_left_out_and_its_cell_redone(tmp_path):
    from ldpbench.results.read import read_run
    from ldpbench.results.store import CorruptRowsWarning

    store = ResultsStore(tmp_path)
    store.append(cell_rows("a", value=0.5))
    store.append(cell_rows("b", value=0.5))
    store.path.write_bytes(store.path.read_bytes().replace(b'"value": 0.5', b'"value": 0.7', 1))
    with pytest.warns(CorruptRowsWarning, match="1 row"):
        assert done_cells(store, KEYS) == {"b"}
    with pytest.warns(CorruptRowsWarning):  # a reader that is quiet about torn lines says so too
        run = read_run(tmp_path, quiet=True)
    assert 0.7 not in run.rows["value"].to_list()


def test_rows_written_without_a_checksum_are_read_as_before(tmp_path):
    store = ResultsStore(tmp_path)
    lines = [{"schema_version": SCHEMA_VERSION, "kind": "ldpbench-results"}, row("a")]
    store.path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load()["value"].to_list() == [0.5]


def test_an_overlong_line_is_skipped_without_reading_it_whole(tmp_path, monkeypatch):
    """Reproduction (issue 28, scaled down): 3 GiB of NULs appended to results.jsonl were read
    whole (MemoryError under a 2 GB address limit). A line beyond the bound is skipped unread."""
    from ldpbench.results import store as store_module

    monkeypatch.setattr(store_module, "MAX_LINE_BYTES", 4096)
    store = ResultsStore(tmp_path)
    store.append(cell_rows("a"))
    with open(store.path, "ab") as fh:
        fh.write(b"\0" * 5_000_000)  # no newline: one huge last "line"
    lines, overlong = store_module.read_lines_bounded(store.path, 4096)
    assert overlong == 1 and max(len(line) for line in lines) < 4096
    with pytest.warns(ResultsWarning, match="skipped 1"):
        assert len(store.load()) == len(KEYS)
    store.append(cell_rows("b"))  # the next append starts on a line of its own
    with pytest.warns(ResultsWarning, match="skipped 1"):
        assert len(store.load()) == 2 * len(KEYS)
