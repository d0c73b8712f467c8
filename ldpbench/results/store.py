"""The results store: one tidy row per (cell, pipeline, metric), appended atomically.

A run directory holds

- ``results.jsonl`` — a header record ``{"schema_version": 1, "kind": "ldpbench-results"}`` on the
  first line, then one JSON object per row (:data:`~ldpbench.engine.rows.COLUMNS`). The rows of one cell
  are written with a single ``os.write`` on an ``O_APPEND`` descriptor and then fsync'd, so a run
  killed at any instant leaves at most one torn last line: :meth:`ResultsStore.load` skips it (and
  counts it), and the cell it belonged to is simply not done, so the next run redoes it. Every row
  also carries the ``append_id`` of its write: a cell's latest append supersedes all its earlier
  rows (:mod:`ldpbench.results.appends`). Every row ends with ``row_crc``, the CRC-32 of its own
  text (:func:`with_row_checksum`): a row altered after it was written (a flipped bit) is left
  out with a :class:`CorruptRowsWarning`, and its cell is redone. The file is read in chunks,
  and a line beyond :data:`MAX_LINE_BYTES` is skipped unread, so garbage cannot exhaust memory.
- ``manifest.json`` — the resolved spec, seed, plugins with versions, git commit, machine and
  ldpbench version, written with tmp + rename.
- ``leaderboard.json`` — the run's leaderboard (:mod:`ldpbench.results.read`), tmp + rename too.

The pieces live in modules of their own, one idea each: the JSON codec (:mod:`.jsoncodec`),
schema versions (:mod:`.versioning`), the row schema (:mod:`ldpbench.engine.rows`),
de-duplication of appends (:mod:`.appends`) and which stored cells a run may reuse (:mod:`.status`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import tempfile
import warnings
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.engine.rows import (
    APPEND_KEY,
    COLUMNS,
    REQUIRED_COLUMNS,
    check_row,
    empty_frame,
    public_columns,
    rows_to_frame,
)
from ldpbench.errors import IOFault, LdpbenchError
from ldpbench.results.appends import latest_appends
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.versioning import (
    RESULTS_KIND,
    SCHEMA_VERSION,
    ResultsSchemaError,
    check_schema_version,
    header_record,
)
from ldpbench.util.safeio import MAX_LEADERBOARD_BYTES, check_regular_file, parse_json, read_text_bounded

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
LEADERBOARD_FILE = "leaderboard.json"


class ResultsWarning(UserWarning):
    """A results file with torn or unreadable lines (skipped, counted)."""


class CorruptRowsWarning(ResultsWarning):
    """Rows whose checksum does not match (left out): a reader says so even when it is quiet
    about a torn last line, since a flipped bit is no accident of a kill."""


#: A row of results.jsonl is a few hundred bytes; a "line" beyond this (gigabytes of NULs
#: written over the file) is garbage, skipped without ever being held in memory.
MAX_LINE_BYTES = 64 << 20
#: The last key of every stored row: CRC-32 of the row's JSON text without it.
CHECKSUM_KEY = "row_crc"
_CHECKSUM_SEP = f', "{CHECKSUM_KEY}": "'.encode()


def with_row_checksum(row_json: str) -> str:
    """``{...}`` with ``"row_crc": "<crc32 of {...}>"`` added as its last key.

    Computed on the bytes written, so a reader checks a line without re-encoding it: a bit
    flipped anywhere in a stored row (3 of 40 random flips changed a served mean) is found.
    """
    crc = zlib.crc32(row_json.encode("utf-8"))
    return f'{row_json[:-1]}, "{CHECKSUM_KEY}": "{crc:08x}"}}'


def row_checksum_ok(line: bytes) -> bool:
    """Whether a stored line's checksum matches its text. A line without one (written before
    rows carried it, or by hand) passes: the check catches corruption, not old files."""
    at = line.rfind(_CHECKSUM_SEP)
    if at < 0 or not line.rstrip().endswith(b"}"):
        return True  # no checksum, or a torn line (cut by a kill): the JSON parser skips the latter
    tail = line[at + len(_CHECKSUM_SEP) :].rstrip()
    if len(tail) != 10 or not tail.endswith(b'"}'):
        return False
    try:
        expected = int(tail[:8], 16)
    except ValueError:
        return False
    return zlib.crc32(line[:at] + b"}") == expected


def read_lines_bounded(path: Path, max_line: int) -> tuple[list[bytes], int]:
    """The lines of ``path`` (without their newlines), read in chunks, and how many lines longer
    than ``max_line`` were dropped unread: memory stays bounded by the file's sensible lines,
    whatever garbage a line holds (3 GiB of NULs under a 2 GB address limit)."""
    lines: list[bytes] = []
    overlong = 0
    parts: list[bytes] = []
    size = 0
    dropping = False
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(1 << 20):
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                piece = chunk[start:] if newline < 0 else chunk[start:newline]
                if not dropping:
                    size += len(piece)
                    if size > max_line:
                        dropping, parts = True, []
                    else:
                        parts.append(piece)
                if newline < 0:
                    break
                if dropping:
                    overlong += 1
                else:
                    lines.append(b"".join(parts))
                parts, size, dropping = [], 0, False
                start = newline + 1
    if dropping:
        overlong += 1
    else:
        lines.append(b"".join(parts))
    return lines, overlong


class ResultsBusy(LdpbenchError):
    """Another ``ldpbench run`` holds the results folder (:meth:`ResultsStore.lock`)."""


def io_fault(exc: OSError, path: str | os.PathLike[str], doing: str) -> IOFault:
    """A one-line :class:`~ldpbench.errors.IOFault` for an ``OSError`` met while storing results."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    code = errno.errorcode.get(exc.errno or 0)
    return IOFault(
        f"cannot {doing} {path}: {reason}"
        + (f" ({code})" if code else "")
        + "; results already written are kept: fix the cause and run again to resume"
    )


def _is_torn_header(line: bytes) -> bool:
    """Whether ``line`` (no newline) is the beginning of our header: a kill during the first write."""
    return not line.endswith(b"\n") and (dumps_json(header_record()) + "\n").encode().startswith(line)


# ----------------------------------------------------------------------------------------------
# The store
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredState:
    """What a run finds in its results folder, read once (:meth:`ResultsStore.read_for_run`)."""

    #: the stored rows (:meth:`ResultsStore.load`)
    rows: pl.DataFrame
    #: the manifest of the run that stored them; empty when there is none or it is unreadable
    manifest: dict[str, Any]


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
        #: Rows left out by the last :meth:`load` because their checksum did not match.
        self.corrupt_rows = 0
        self._size_after_append = -1  # the file's size after our last append (skip re-checks)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.directory)!r})"

    # -- writing -----------------------------------------------------------------------------

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append the rows of one cell (or of the cells of a bundle, which come back together) as
        one atomic write, then fsync.

        A new (or empty) file gets the header record first, in the same write. If the file ends
        in a torn line (a previous run was killed mid-write), a newline is written first so the
        torn line stays a line of its own and the new rows stay intact.
        """
        rows = list(rows)
        for row in rows:
            check_row(row)
        if not rows:
            return
        # Schema columns first, in order; extra keys are kept in the file (load ignores them).
        append_id = os.urandom(8).hex()
        block = "".join(
            with_row_checksum(dumps_json({**{k: row.get(k) for k in COLUMNS}, **row, APPEND_KEY: append_id})) + "\n"
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
            return dumps_json(header_record()) + "\n"
        with open(self.path, "rb") as fh:
            first = fh.readline()
            if _is_torn_header(first):
                # The very first write was torn: the file is a partial header, nothing else.
                os.ftruncate(fd, 0)
                return dumps_json(header_record()) + "\n"
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

    def read_for_run(self) -> StoredState:
        """What a run finds here, each file read once, and checked before anything is written.

        ``results.jsonl`` must be ours and of this schema version (a torn first write counts as
        empty); a ``manifest.json`` of a newer schema means a newer ldpbench owns the folder.
        Checking only when the rows are appended would be too late: a run writes its manifest
        first, and would replace the newer one with ours before refusing. An older or unreadable
        manifest is ours to replace (it is always rewritten whole).
        """
        if self.directory.exists() and not self.directory.is_dir():
            raise io_fault(
                NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)),
                self.directory,
                "use as the results folder",
            )
        if self.path.is_dir():  # a file a run cannot append to: an I/O fault, as when appending
            raise io_fault(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)), self.path, "read")
        rows = self.load()  # reads and checks the header
        try:
            manifest = json.loads(read_text_bounded(self.manifest_path, limit=MAX_LEADERBOARD_BYTES, what="manifest"))
        except (LdpbenchError, ValueError, RecursionError):
            return StoredState(rows, {})
        if not isinstance(manifest, dict):
            return StoredState(rows, {})
        version = manifest.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            check_schema_version(manifest, str(self.manifest_path), what="manifest")
        return StoredState(rows, manifest)

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

    def load(self) -> pl.DataFrame:
        """All rows as a frame of the row schema (:data:`~ldpbench.engine.rows.SCHEMA`), even when empty.

        When a cell was appended more than once (a rerun of a failed or incomplete cell), only its
        latest append counts; its rows take the place where the cell first appeared, so the order
        of the file is kept. Torn or unreadable lines are skipped, counted in
        :attr:`skipped_lines`, and reported with a :class:`ResultsWarning`.
        """
        self.skipped_lines = 0
        self.corrupt_rows = 0
        if self.path.exists() or self.path.is_symlink():
            check_regular_file(self.path, "results file")  # a FIFO would block, a device never end
        try:
            lines, overlong = read_lines_bounded(self.path, MAX_LINE_BYTES)
        except FileNotFoundError:
            return empty_frame()
        except OSError as exc:
            raise io_fault(exc, self.path, "read") from None
        self.skipped_lines += overlong
        # A torn first write leaves a partial header with no newline: the store is empty.
        if len(lines) == 1 and _is_torn_header(lines[0]):
            if lines[0]:
                self.skipped_lines = 1
                self._warn_skipped()
            return empty_frame()
        self._check_header(lines[0])
        body = []
        for line in lines[1:]:
            if not line.strip():
                continue
            if row_checksum_ok(line):
                body.append(line)
            else:
                self.corrupt_rows += 1
        if self.corrupt_rows:
            self._warn_corrupt()
        try:  # one parse of the whole body is several times faster than one per line
            rows = json.loads(b"[" + b",".join(body) + b"]")
        except (ValueError, RecursionError):  # a torn or garbled line (or one nested too deeply): find it
            rows = []
            for line in body:
                try:
                    rows.append(json.loads(line))
                except (ValueError, RecursionError):
                    self.skipped_lines += 1
        complete = [row for row in rows if isinstance(row, dict) and REQUIRED_COLUMNS <= row.keys()]
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
        appends = pl.Series(APPEND_KEY, [v if isinstance(v := row.get(APPEND_KEY), str) else None for row in rows])
        return latest_appends(frame.with_columns(appends.cast(pl.String)))

    def _warn_corrupt(self) -> None:
        warnings.warn(
            f"{self.path}: left out {self.corrupt_rows} row(s) whose checksum does not match "
            "(the file was altered or corrupted after it was written; their cells are redone on the next run)",
            CorruptRowsWarning,
            stacklevel=3,
        )

    def _warn_skipped(self) -> None:
        warnings.warn(
            f"{self.path}: skipped {self.skipped_lines} torn or unreadable line(s) "
            "(a killed run leaves one; its cell is redone on the next run)",
            ResultsWarning,
            stacklevel=3,
        )

    def export_parquet(self, path: str | os.PathLike[str]) -> Path:
        """Write the (de-duplicated) rows to a Parquet file; returns its path."""
        path = Path(path)
        public_columns(self.load()).write_parquet(path)
        return path


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
