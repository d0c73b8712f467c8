"""The results store: one tidy row per (cell, pipeline, metric), appended atomically.

A run directory holds

- ``results.jsonl`` — a header record ``{"schema_version": 1, "kind": "ldpbench-results"}`` on the
  first line, then one JSON object per row (:data:`COLUMNS`). The rows of one cell are written
  with a single ``os.write`` on an ``O_APPEND`` descriptor and then fsync'd, so a run killed at any
  instant leaves at most one torn last line: :meth:`ResultsStore.load` skips it (and counts it),
  and the cell it belonged to is simply not done, so the next run redoes it (DESIGN.md step 5).
  Every row also carries the ``append_id`` of its write: a cell's latest append supersedes all
  its earlier rows.
- ``manifest.json`` — the resolved spec, seed, plugins with versions, git commit, machine and
  ldpbench version (aesthetics pattern 12), written with tmp + rename.

A ``leaderboard.json`` (``ldpbench run``, ``ldpbench leaderboard --format json``, a CI baseline) is
a bare JSON list of rows, so that ``--format json`` stays a list on stdout; each row carries the
same ``schema_version`` and :func:`check_leaderboard_schema` vets them when one is read back.

Versioning follows asv (pattern 13): a file from an older or newer schema is refused with a message
that says what to do, never misread.

JSON has no NaN or infinity. We write NaN as ``null`` (a failed value, a personalized budget) and
±infinity as ``±1e999`` — valid JSON that Python and JavaScript parse back to infinity (``epsilon:
inf`` is a legal budget). :func:`dumps_json` does that for every file ldpbench writes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .errors import IOFault, LdpbenchError
from .safeio import MAX_LEADERBOARD_BYTES, check_regular_file, parse_json, read_text_bounded

#: Version of the results-file layout. Bump it when a column changes meaning or type.
SCHEMA_VERSION = 1
#: ``kind`` of the header record: tells a results file from any other JSONL.
RESULTS_KIND = "ldpbench-results"
RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
LEADERBOARD_FILE = "leaderboard.json"
#: The key holding the schema version: in the results header, the manifest, every leaderboard row.
SCHEMA_KEY = "schema_version"
#: The schema a leaderboard row without :data:`SCHEMA_KEY` is read as. Leaderboards were versioned
#: after schema 1 was fixed, with the columns unchanged: an unversioned file is schema 1, and
#: once :data:`SCHEMA_VERSION` moves past it, such a file is refused as older like any other.
UNVERSIONED_LEADERBOARD_SCHEMA = 1
#: How to regenerate an older results file (the default of :func:`check_schema_version`).
REGENERATE_RESULTS = "rerun the spec into a new results directory (`ldpbench run SPEC`) to regenerate it"
#: How to regenerate an older leaderboard: every writer of one reruns or re-aggregates its spec.
REGENERATE_LEADERBOARD = (
    "regenerate it with `ldpbench run SPEC` (which writes RESULTS/leaderboard.json); a CI baseline "
    "with scripts/update_ci_baseline.sh or `pytest --ldpbench-update-baseline`"
)

#: The row schema, in column order. Every row the runner produces has exactly these keys.
COLUMNS: dict[str, pl.DataType] = {
    "cell_id": pl.String(),  # hex hash of the cell identity, seed included
    "dataset": pl.String(),
    "users": pl.String(),  # "" when every user shares one epsilon
    "epsilon": pl.Float64(),  # NaN under personalized budgets
    "oracle": pl.String(),
    "pipeline": pl.String(),  # chain members joined by "+"
    "metric": pl.String(),
    "greater_is_better": pl.Boolean(),
    "repeat": pl.Int64(),
    "value": pl.Float64(),  # NaN when the cell failed
    "error": pl.String(),  # "ExcType: message" of the plugin that raised, else null
    "notes": pl.String(),  # warnings the pipeline's plugins left in Estimate.info ("; "-joined), else null
    "info": pl.String(),  # JSON object of the pipeline's Estimate.info["diagnostics"] (e.g. EM's alpha), else null
    "simulation": pl.String(),  # "aggregate" | "per-user"
    "n": pl.Int64(),
    "d": pl.Int64(),
    "fingerprint": pl.String(),  # hash of plugin names, versions and params behind the row
    "elapsed": pl.Float64(),  # seconds
    "where": pl.String(),  # failed rows: the plugin frames that raised ("file:line in func <- ..."), else null
    "theory": pl.Float64(),  # expected value of the unprocessed estimate's metric (ldpbench.theory), else NaN
}
#: A row is identified by these. One cell has several oracle labels when its mechanism is a
#: protocol ("blender:blended", "blender:client", ...), so the oracle is part of the key.
ROW_KEY = ("cell_id", "oracle", "pipeline", "metric")
#: Extra key stamped on every row of one :meth:`ResultsStore.append`: the latest append of a cell
#: supersedes every earlier row of that cell (its labels may differ: a failed protocol cell has
#: one "blender" row per pipeline and metric, its rerun one per protocol output).
APPEND_KEY = "append_id"
_FLOAT_COLUMNS = frozenset(k for k, t in COLUMNS.items() if t == pl.Float64())
#: Columns added after schema 1 was first written; a row without them is still complete (null).
OPTIONAL_COLUMNS = frozenset({"notes", "where", "info", "theory"})
_COLUMN_SET = frozenset(COLUMNS) - OPTIONAL_COLUMNS


class ResultsWarning(UserWarning):
    """A results file with torn or unreadable lines (skipped, counted)."""


class ResultsSchemaError(LdpbenchError):
    """A results file this ldpbench cannot read: no header, or another schema version."""


class ResultsBusy(LdpbenchError):
    """Another ``ldpbench run`` holds the results folder (:meth:`ResultsStore.lock`)."""


def io_fault(exc: OSError, path: str | os.PathLike[str], doing: str) -> IOFault:
    """A one-line :class:`~ldpbench.errors.IOFault` for an ``OSError`` met while storing results."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    code = errno.errorcode.get(exc.errno or 0)
    return IOFault(
        f"cannot {doing} {path}: {reason}" + (f" ({code})" if code else "")
        + "; results already written are kept: fix the cause and run again to resume"
    )


# ----------------------------------------------------------------------------------------------
# JSON without NaN
# ----------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """NumPy scalars and arrays to Python ones (rows often carry ``np.float64``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


_POS_INF = "\x00ldpbench+inf\x00"
_NEG_INF = "\x00ldpbench-inf\x00"


def _encodable(obj: Any) -> Any:
    obj = _plain(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return _POS_INF if obj > 0 else _NEG_INF
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _encodable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encodable(v) for v in obj]
    return obj


def _default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps_json(obj: Any, indent: int | None = None) -> str:
    """``json.dumps`` that writes NaN as ``null`` and ±inf as ``±1e999`` (strict JSON).

    ``json.loads`` reads ``1e999`` back as ``inf``; ``null`` comes back as ``None``.
    """
    try:  # the common case, no NaN, infinity or NumPy integer: no copy needed
        return json.dumps(obj, indent=indent, allow_nan=False)
    except (ValueError, TypeError):
        pass
    # Infinities travel through json.dumps as sentinel strings, then become bare numbers.
    text = json.dumps(_encodable(obj), indent=indent, allow_nan=False, default=_default)
    return text.replace(json.dumps(_POS_INF), "1e999").replace(json.dumps(_NEG_INF), "-1e999")


# ----------------------------------------------------------------------------------------------
# Schema checks
# ----------------------------------------------------------------------------------------------


def _header_record() -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "kind": RESULTS_KIND}


def check_schema_version(
    record: Any, where: str, what: str = "results file", regenerate: str = REGENERATE_RESULTS
) -> None:
    """Refuse a header (or manifest) that is not ours or has another schema version (asv style).

    :param regenerate: what to do with an older file (the message ends with it).
    """
    if not isinstance(record, dict) or SCHEMA_KEY not in record:
        raise ResultsSchemaError(
            f"{where}: not an ldpbench {what} (no schema_version header); "
            "it was not written by ldpbench, or by a pre-release without versioned results"
        )
    version = record[SCHEMA_KEY]
    if not isinstance(version, int) or isinstance(version, bool):
        raise ResultsSchemaError(f"{where}: schema_version must be an integer, got {version!r}")
    if version < SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{where}: {what} has schema version {version}, older than the version {SCHEMA_VERSION} "
            f"this ldpbench reads (written by an older ldpbench); no automatic migration exists "
            f"for it: {regenerate}"
        )
    if version > SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{where}: {what} has schema version {version}, newer than the version "
            f"{SCHEMA_VERSION} this ldpbench reads (written by a newer ldpbench): update ldpbench "
            "(`pip install -U ldpbench`)"
        )


def check_leaderboard_schema(rows: Iterable[Mapping[str, Any]], where: str) -> None:
    """Refuse a JSON leaderboard (its rows) of another schema version.

    A leaderboard is a bare list of rows, so the version travels in every row rather than in a
    header. A row without one is of :data:`UNVERSIONED_LEADERBOARD_SCHEMA` (written before
    leaderboards were versioned). Each distinct version is checked once, so a file's first
    foreign row names the problem.
    """
    seen: set[str] = set()
    for row in rows:
        version = row.get(SCHEMA_KEY, UNVERSIONED_LEADERBOARD_SCHEMA)
        if repr(version) in seen:  # repr: any JSON value, and True stays apart from 1
            continue
        seen.add(repr(version))
        # The same check and messages as a results file, with the leaderboard's own remedy.
        check_schema_version({SCHEMA_KEY: version}, where, what="leaderboard", regenerate=REGENERATE_LEADERBOARD)


def stamp_leaderboard_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Leaderboard rows as written to JSON: each with :data:`SCHEMA_KEY` first."""
    return [{SCHEMA_KEY: SCHEMA_VERSION, **row} for row in rows]


def empty_frame() -> pl.DataFrame:
    """An empty results frame with the fixed schema."""
    return pl.DataFrame(schema=COLUMNS)


def rows_to_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows (dicts) to a frame with the fixed schema; ``null`` floats become NaN.

    Keys outside :data:`COLUMNS` are dropped: the schema is the contract.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    # Column by column: polars takes Python and NumPy scalars, and refuses wrong types (strict).
    columns = {key: [row.get(key) for row in rows] for key in COLUMNS}
    df = pl.DataFrame(columns, schema=COLUMNS, strict=True)
    return df.with_columns(pl.col(sorted(_FLOAT_COLUMNS)).fill_null(math.nan))


def _is_torn_header(line: bytes) -> bool:
    """Whether ``line`` (no newline) is the beginning of our header: a kill during the first write."""
    return not line.endswith(b"\n") and (dumps_json(_header_record()) + "\n").encode().startswith(line)


def _check_row(row: Mapping[str, Any]) -> None:
    missing = [k for k in COLUMNS if k not in row and k not in OPTIONAL_COLUMNS]
    if missing:
        # The runner builds rows; a missing key is a bug there, not a user mistake.
        raise ValueError(f"result row lacks column(s) {', '.join(missing)}: {dict(row)!r}")


# ----------------------------------------------------------------------------------------------
# The store
# ----------------------------------------------------------------------------------------------


class ResultsStore:
    """``results.jsonl``, ``manifest.json`` and ``leaderboard.json`` in one run directory.

    :param directory: the run directory; created (with parents) on the first write.
    """

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE
        self.manifest_path = self.directory / MANIFEST_FILE
        self.leaderboard_path = self.directory / LEADERBOARD_FILE
        #: Lines skipped by the last :meth:`load` (a torn last line after a kill, or garbage).
        self.skipped_lines = 0
        self._size_after_append = -1  # the file's size after our last append (skip re-checks)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.directory)!r})"

    # -- writing -----------------------------------------------------------------------------

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append the rows of one cell as one atomic write, then fsync.

        A new (or empty) file gets the header record first, in the same write. If the file ends
        in a torn line (a previous run was killed mid-write), a newline is written first so the
        torn line stays a line of its own and the new rows stay intact.
        """
        rows = list(rows)
        for row in rows:
            _check_row(row)
        if not rows:
            return
        # Schema columns first, in order; extra keys are kept in the file (load ignores them).
        append_id = os.urandom(8).hex()
        block = "".join(
            dumps_json({**{k: row.get(k) for k in COLUMNS}, **row, APPEND_KEY: append_id}) + "\n"
            for row in rows
        )
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise io_fault(exc, self.path, "write results to") from None
        before = -1
        try:
            before = os.fstat(fd).st_size
            prefix = self._prefix_for_append(fd)
            data = (prefix + block).encode("utf-8")
            written = os.write(fd, data)
            while written < len(data):  # a short write to a regular file is rare; finish it
                written += os.write(fd, data[written:])
            os.fsync(fd)
            self._size_after_append = os.fstat(fd).st_size
        except OSError as exc:
            # A disk that filled up mid-write leaves part of the cell: cut it off, so the file
            # ends where the last whole cell did and the next run appends after it.
            if before >= 0:
                try:
                    os.ftruncate(fd, before)
                except OSError:
                    pass  # then load() skips the torn line, as after a kill
            self._size_after_append = -1
            raise io_fault(exc, self.path, "write results to") from None
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the results folder for one run: a second ``ldpbench run`` into the same folder is
        refused at once (:class:`ResultsBusy`) instead of interleaving appends with this one.

        An advisory ``flock`` on the folder itself (no lock file is left behind, so a refused run
        leaves the folder exactly as it was); the kernel drops it when the process dies, so a
        killed run never leaves the folder locked.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise io_fault(exc, self.directory, "create the results folder") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsBusy(
                    f"{self.directory}: another ldpbench run is writing to this results folder; "
                    "wait for it to finish (then run again: finished cells are kept) or choose another --out"
                ) from None
            yield
        finally:
            os.close(fd)  # releases the lock

    def _prefix_for_append(self, fd: int) -> str:
        """What must precede new rows: the header for a new file, a newline after a torn line."""
        size = os.fstat(fd).st_size
        if size == self._size_after_append:
            return ""  # as we left it: header checked, last line whole
        if size == 0:
            return dumps_json(_header_record()) + "\n"
        with open(self.path, "rb") as fh:
            first = fh.readline()
            if _is_torn_header(first):
                # The very first write was torn: the file is a partial header, nothing else.
                os.ftruncate(fd, 0)
                return dumps_json(_header_record()) + "\n"
            self._check_header(first)
            fh.seek(size - 1)
            last_byte = fh.read(1)
        return "" if last_byte == b"\n" else "\n"

    def _check_header(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and record.get("kind", RESULTS_KIND) != RESULTS_KIND:
            kind = record.get("kind")
            raise ResultsSchemaError(f"{self.path}: not an ldpbench results file (kind {kind!r})")
        check_schema_version(record, str(self.path))

    def write_manifest(self, manifest: Mapping[str, Any]) -> None:
        """Write ``manifest.json`` atomically (a temporary file renamed over the old one).

        ``schema_version`` is added if the caller left it out.
        """
        record = {"schema_version": SCHEMA_VERSION, **dict(manifest)}
        write_atomically(self.manifest_path, dumps_json(record, indent=2) + "\n")

    def write_leaderboard(self, text: str) -> None:
        """Write ``leaderboard.json`` (the rendered JSON leaderboard) atomically."""
        write_atomically(self.leaderboard_path, text)

    def check_writable(self) -> None:
        """Refuse a run directory this ldpbench must not write to, before anything is written.

        ``results.jsonl`` must be ours and of this schema version (a torn first write counts as
        empty); a ``manifest.json`` of a newer schema means a newer ldpbench owns the folder.
        Checking only when the rows are appended would be too late: a run writes its manifest
        first, and would replace the newer one with ours before refusing.
        """
        if self.directory.exists() and not self.directory.is_dir():
            raise io_fault(NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)), self.directory,
                           "use as the results folder")
        try:
            with open(self.path, "rb") as fh:
                first = fh.readline()
        except FileNotFoundError:
            first = b""
        except OSError as exc:
            raise io_fault(exc, self.path, "read") from None
        if first and not _is_torn_header(first):
            self._check_header(first)
        try:
            manifest = json.loads(read_text_bounded(self.manifest_path, limit=MAX_LEADERBOARD_BYTES, what="manifest"))
        except (LdpbenchError, ValueError, RecursionError):
            return  # none, or unreadable: ours to replace (it is always rewritten whole)
        version = manifest.get("schema_version") if isinstance(manifest, dict) else None
        # An older manifest beside no results (or results just checked) is simply rewritten.
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            check_schema_version(manifest, str(self.manifest_path), what="manifest")

    # -- reading -----------------------------------------------------------------------------

    def read_manifest(self) -> dict[str, Any]:
        """The run manifest; a missing, unreadable or other-version manifest is a user error."""
        if not self.manifest_path.exists():
            raise LdpbenchError(f"{self.manifest_path}: no run manifest in {self.directory}")
        text = read_text_bounded(self.manifest_path, limit=MAX_LEADERBOARD_BYTES, what="manifest")
        record = parse_json(text, str(self.manifest_path), "run manifest")
        check_schema_version(record, str(self.manifest_path), what="manifest")
        return record

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self, extra: Sequence[str] = ()) -> pl.DataFrame:
        """All rows as a frame with the fixed schema (:data:`COLUMNS`), even when empty.

        :param extra: keys rows may carry besides the columns (``code_fingerprint``), added as
            string columns after them (null where a row lacks one or it is not a string).

        When a cell was appended more than once (a rerun of a failed or incomplete cell), only its
        latest append counts; its rows take the place where the cell first appeared, so the order
        of the file is kept. Torn or unreadable lines are skipped, counted in
        :attr:`skipped_lines`, and reported with a :class:`ResultsWarning`.
        """
        self.skipped_lines = 0
        if self.path.exists() or self.path.is_symlink():
            check_regular_file(self.path, "results file")  # a FIFO would block, a device never end
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _with_extra(empty_frame(), extra)
        lines = data.split(b"\n")
        # A torn first write leaves a partial header with no newline: the store is empty.
        if len(lines) == 1 and _is_torn_header(lines[0]):
            if lines[0]:
                self.skipped_lines = 1
                self._warn_skipped()
            return _with_extra(empty_frame(), extra)
        self._check_header(lines[0])
        body = [line for line in lines[1:] if line.strip()]
        try:  # one parse of the whole body is several times faster than one per line
            rows = json.loads(b"[" + b",".join(body) + b"]")
        except (ValueError, RecursionError):  # a torn or garbled line (or one nested too deeply): find it
            rows = []
            for line in body:
                try:
                    rows.append(json.loads(line))
                except (ValueError, RecursionError):
                    self.skipped_lines += 1
        complete = [row for row in rows if isinstance(row, dict) and _COLUMN_SET <= row.keys()]
        self.skipped_lines += len(rows) - len(complete)
        rows = complete
        if self.skipped_lines:
            self._warn_skipped()
        try:
            frame = rows_to_frame(rows)
        except (TypeError, pl.exceptions.PolarsError) as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            message = f"{self.path}: a row has a value of the wrong type ({first_line})"
            raise ResultsSchemaError(message) from None
        appends = [
            pl.Series(key, [v if isinstance(v := row.get(key), str) else None for row in rows], dtype=pl.String)
            for key in (APPEND_KEY, *extra)
        ]
        return latest_appends(frame.with_columns(appends))

    def _warn_skipped(self) -> None:
        warnings.warn(
            f"{self.path}: skipped {self.skipped_lines} torn or unreadable line(s) "
            "(a killed run leaves one; its cell is redone on the next run)",
            ResultsWarning,
            stacklevel=3,
        )

    def done_cells(
        self, expected_keys: Iterable[tuple[str, str]] | Mapping[str, Iterable[tuple[str, str]]]
    ) -> set[str]:
        """The cell ids whose every expected (pipeline, metric) row is stored as a finished value.

        A finished value has no error and is finite: a row edited by hand to NaN, ``null`` or
        infinity without an error is not a result, and its cell is redone.

        :param expected_keys: the (pipeline, metric) pairs every cell produces, or a mapping
            ``cell_id -> pairs`` when cells differ (then only those cells are considered).
        """
        df = self.load().filter(pl.col("error").is_null() & pl.col("value").is_finite())
        present: dict[str, set[tuple[str, str]]] = {}
        for cell, pipeline, metric in df.select("cell_id", "pipeline", "metric").iter_rows():
            present.setdefault(cell, set()).add((pipeline, metric))
        if isinstance(expected_keys, Mapping):
            return {
                cell
                for cell, keys in expected_keys.items()
                if set(map(tuple, keys)) <= present.get(cell, set())
            }
        expected = {tuple(k) for k in expected_keys}
        return {cell for cell, keys in present.items() if expected <= keys}

    def cell_status(
        self, expected: Mapping[str, Mapping[tuple[str, str], tuple[str, str]]], code_key: str = "code_fingerprint"
    ) -> tuple[set[str], set[str]]:
        """Which cells may be reused, and which were stored by code or data that has changed.

        :param expected: ``cell_id -> {(pipeline, metric): (fingerprint, code fingerprint)}``: the
            rows each cell must have and the fingerprints of what would produce them now
            (:func:`ldpbench.engine.row_fingerprint`, :func:`~ldpbench.engine.row_code_fingerprint`).
        :param code_key: the row key holding the code fingerprint.
        :returns: ``(done, stale)``: ``done`` cells have every expected row, finished (no error,
            a finite value) and with today's fingerprints; ``stale`` cells have a stored row of an
            expected (pipeline, metric) whose fingerprints differ, so its numbers came from another
            version of a plugin, other parameters or other data (or from a row without a code
            fingerprint, written before there was one: its code is unknown).
        """
        df = self.load(extra=(code_key,)).filter(pl.col("cell_id").is_in(list(expected)))
        ok: dict[str, set[tuple[str, str]]] = {}
        bad: set[str] = set()
        stale: set[str] = set()
        columns = ("cell_id", "pipeline", "metric", "fingerprint", code_key, "error", "value")
        for cell, pipeline, metric, fp, code, error, value in df.select(columns).iter_rows():
            want = expected[cell].get((pipeline, metric))
            if want is None:
                continue  # a pipeline or metric no longer in the spec: not this run's business
            if (fp, code) != tuple(want):
                stale.add(cell)
            elif error is None and value is not None and math.isfinite(value):
                ok.setdefault(cell, set()).add((pipeline, metric))
            else:
                bad.add(cell)  # failed, or a hand-edited non-finite value: redo it
        done = {
            cell for cell, keys in expected.items()
            if cell not in stale and cell not in bad and set(keys) <= ok.get(cell, set())
        }
        return done, stale

    def export_parquet(self, path: str | os.PathLike[str]) -> Path:
        """Write the (de-duplicated) rows to a Parquet file; returns its path."""
        path = Path(path)
        self.load().write_parquet(path)
        return path


def _with_extra(frame: pl.DataFrame, extra: Sequence[str]) -> pl.DataFrame:
    return frame.with_columns([pl.lit(None, dtype=pl.String).alias(key) for key in extra])


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it (readers never see half a
    file); a full disk or a read-only folder is an :class:`~ldpbench.errors.IOFault`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    except OSError as exc:
        raise io_fault(exc, path, "write") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise io_fault(exc, path, "write") from None
        raise


def write_leaderboard_json(path: str | os.PathLike[str], text: str) -> None:
    """Write a leaderboard (or merged manifest) file; a full disk or a read-only folder is an
    :class:`~ldpbench.errors.IOFault`."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise io_fault(exc, path, "write") from None


def latest_appends(df: pl.DataFrame) -> pl.DataFrame:
    """Keep each cell's latest append; order rows by their cell's first appearance.

    ``df`` has the :data:`COLUMNS` plus :data:`APPEND_KEY` (dropped on return). Rows without an
    append id (written by hand) form one append per contiguous run of a cell. Within the
    surviving append, a repeated :data:`ROW_KEY` keeps its last row.
    """
    if df.is_empty():
        return df.drop(APPEND_KEY)
    cell = pl.col("cell_id")
    run = (cell != cell.shift(1)).fill_null(True).cum_sum().cast(pl.String)
    return (
        df.with_row_index("_i")
        .with_columns(
            _block=pl.coalesce(pl.col(APPEND_KEY), pl.lit("run-") + run),
            _first=pl.col("_i").min().over("cell_id"),
        )
        .filter(pl.col("_block") == pl.col("_block").last().over("cell_id"))
        .filter(pl.col("_i") == pl.col("_i").max().over(list(ROW_KEY)))
        .sort(["_first", "_i"])
        .drop("_i", "_block", "_first", APPEND_KEY)
    )
