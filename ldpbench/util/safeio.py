"""Reading files a user names (specs, baselines, leaderboards, histograms) without surprises.

A path in a spec or on the command line may name anything: a FIFO that blocks forever, a device
that never ends (``/dev/zero``), a directory, a file of many gigabytes. :func:`read_bounded`
opens it without blocking, refuses anything that is not a regular file, and reads at most
``limit`` bytes, so that every such mistake is a one-line :class:`~ldpbench.errors.UsageError`
found at once, bounded in time and memory.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from ldpbench.errors import UsageError

#: A spec is a few kilobytes; anything near this is not a spec.
MAX_SPEC_BYTES = 1 << 20
#: Leaderboards and baselines: a large grid is a few megabytes.
MAX_LEADERBOARD_BYTES = 256 << 20


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` if it names an existing regular file (links followed), else a :class:`UsageError`.

    ``stat`` never blocks, even on a FIFO, so this is safe to call on any path a user gives.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UsageError(f"{what} {p}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{what} {p}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{what} {p}: is {_kind(st.st_mode)}, not a regular file")
    return p


def read_bounded(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, refusing files larger than ``limit`` bytes.

    Opened with ``O_NONBLOCK`` so that a FIFO swapped in after the check cannot block; the size
    is checked on the open descriptor (no race with the path), and at most ``limit + 1`` bytes are
    ever read, whatever the file claims.

    :param what: how the message names the file (``"spec"``, ``"baseline"``, ...).
    """
    p = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise UsageError(f"{what} {p}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {p}: is a directory, not a regular file") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no writer, opened non-blocking for reading
            raise UsageError(f"{what} {p}: is a FIFO (named pipe), not a regular file") from None
        raise UsageError(f"{what} {p}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{what} {p}: is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise UsageError(f"{what} {p}: {st.st_size:,} bytes, more than the {limit:,} a {what} may have")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise UsageError(f"{what} {p}: more than the {limit:,} bytes a {what} may have")
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{what} {p}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_text_bounded(path: str | os.PathLike[str], *, limit: int, what: str) -> str:
    """:func:`read_bounded` decoded as UTF-8 (a decoding error is a :class:`UsageError` too)."""
    data = read_bounded(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path}: not UTF-8 text (byte {exc.start})") from None


def parse_json(text: str, where: str, what: str) -> Any:
    """``json.loads`` whose every failure is a one-line :class:`UsageError` naming ``where``.

    Deeply nested JSON (``[[[[...`` ten thousand deep) makes the parser raise ``RecursionError``,
    which is no ``ValueError``: caught here, it would otherwise be a traceback.

    :param what: what the file should have been (``"leaderboard"``, ``"run manifest"``).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"{where}: not a {what} (JSON nested too deeply)") from None
    except ValueError as exc:
        raise UsageError(f"{where}: not valid JSON ({exc})") from None
