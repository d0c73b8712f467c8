"""Reading FIMI-format transaction files into item-count histograms.

FIMI format (Frequent Itemset Mining Implementations repository, fimi.uantwerpen.be): one
transaction per line, non-negative integer item ids separated by spaces (a trailing space is
common). ldpbench's one-item-per-user view (as in [JG19] §IV and [W17] §5) flattens the
transactions: every item occurrence is a user.

The parser is vectorized over the bytes of the file (no Python loop over tokens), so the full
Kosarak file (8 million occurrences, 32 MB) parses in about a second. ``.gz``, ``.xz`` and ``.bz2``
files are decompressed on the fly.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldpbench.errors import UsageError
from ldpbench.util.safeio import check_regular_file, read_bounded

_OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


#: The most bytes a transaction file may hold once decompressed (Kosarak is 32 MB; the largest
#: FIMI files are a few hundred). A bound on the decompressed size also stops a compression bomb.
MAX_DATA_BYTES = 4 << 30


def read_bytes(path: Path) -> bytes:
    """The (decompressed) content of a file, at most :data:`MAX_DATA_BYTES`.

    Only a regular file is opened (a FIFO would block, a device never end).
    """
    opener = _OPENERS.get(path.suffix.lower())
    if opener is None:
        return read_bounded(path, limit=MAX_DATA_BYTES, what="data file")
    check_regular_file(path, "data file")
    try:
        with opener(path, "rb") as fh:
            data = fh.read(MAX_DATA_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}") from None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if len(data) > MAX_DATA_BYTES:
        raise UsageError(f"data file {path}: more than {MAX_DATA_BYTES:,} bytes once decompressed")
    return data


def git_blob_sha1(data: bytes) -> str:
    """``git hash-object`` of the content: SHA-1 of ``b"blob <size>\\0" + data``."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class FimiStats:
    """What a FIMI file holds."""

    items: np.ndarray  #: every occurrence's item id, in file order
    transactions: int
    empty_lines: int
    repeated_in_transaction: int  #: transactions that list some item more than once


def parse_fimi(data: bytes, source: str = "<data>") -> FimiStats:
    """Item ids and counts of a FIMI-format byte string (vectorized)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        raise UsageError(f"{source}: the file is empty")
    digit = (buf >= 48) & (buf <= 57)
    space = (buf == 32) | (buf == 9) | (buf == 13)
    newline = buf == 10
    bad = ~(digit | space | newline)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        line = int(np.count_nonzero(newline[:pos])) + 1
        raise UsageError(
            f"{source}:{line}: not a FIMI transaction file (unexpected byte {bytes(buf[pos : pos + 1])!r}; "
            "expected item ids separated by spaces)"
        )
    # Tokens: maximal runs of digits. Each digit contributes digit * 10^(places to the token's end).
    prev_digit = np.concatenate([[False], digit[:-1]])
    next_digit = np.concatenate([digit[1:], [False]])
    starts = np.flatnonzero(digit & ~prev_digit)
    last = np.flatnonzero(digit & ~next_digit)
    if starts.size == 0:
        raise UsageError(f"{source}: no item ids found")
    if (last - starts).max() >= 18:
        raise UsageError(f"{source}: an item id has more than 18 digits")
    idx = np.flatnonzero(digit)
    tok = np.cumsum(digit & ~prev_digit)[idx] - 1
    contrib = (buf[idx].astype(np.int64) - 48) * np.power(10, last[tok] - idx, dtype=np.int64)
    values = np.add.reduceat(contrib, np.searchsorted(idx, starts))
    # Transactions: lines that hold at least one token.
    line_of_token = np.cumsum(newline)[starts]
    n_lines = int(np.count_nonzero(newline)) + (0 if buf[-1] == 10 else 1)
    nonempty = np.unique(line_of_token)
    empty_lines = n_lines - nonempty.size
    # transactions that list an item more than once
    key = line_of_token.astype(np.int64) * (int(values.max()) + 1) + values
    uniq, cnt = np.unique(key, return_counts=True)
    repeated_rows = int(np.unique(uniq[cnt > 1] // (int(values.max()) + 1)).size)
    return FimiStats(values, int(nonempty.size), int(empty_lines), repeated_rows)


def histogram(items: np.ndarray, domain: str = "observed") -> tuple[np.ndarray, list[str]]:
    """Counts and item labels. ``observed``: the distinct items that occur (ascending id);
    ``id-range``: every id from 0 to the largest (absent ids get count 0)."""
    if domain == "id-range":
        counts = np.bincount(items)
        return counts.astype(np.int64), [str(i) for i in range(counts.size)]
    ids, counts = np.unique(items, return_counts=True)
    return counts.astype(np.int64), [str(int(i)) for i in ids]


def read_fimi(path: Path) -> tuple[FimiStats, bytes]:
    data = read_bytes(path)
    return parse_fimi(data, str(path)), data
