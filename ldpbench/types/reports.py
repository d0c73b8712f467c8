"""What a client sends: the canonical encoding of a chunk of reports, one message per user.

epsilon-LDP is a property of the message a user transmits, not of the abstraction an oracle
declares about it (its output table, its support sets). Whatever a report object carries beyond
its table row — the order of its items, an extra field, its dtype — reaches the aggregator too,
so the audits judge the bytes of :meth:`~ldpbench.types.Oracle.encode_reports`.

Messages are held as a ``(n_users, width)`` ``uint8`` matrix: row ``u`` is user ``u``'s message,
self-delimiting (a length prefix, or headers that give every field's shape), then zeros. Messages of
different chunks are compared after padding both with zeros to a common width
(:func:`common_width`), which never makes two different messages equal. :func:`default_encoding` is the encoding of the report types the built-ins use; an oracle
whose reports are of another type declares its own (``encode_reports``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Bytes of the length prefix of a variable-length message (:func:`pack_messages`).
_LENGTH_BYTES = 4


def _header(text: str) -> np.ndarray:
    raw = text.encode()
    return np.frombuffer(len(raw).to_bytes(_LENGTH_BYTES, "little") + raw, dtype=np.uint8)


def array_rows(name: str, values: np.ndarray, n_users: int) -> np.ndarray:
    """``(n_users, width)`` bytes of an array whose row ``u`` belongs to user ``u``: a header that
    names the field, the dtype (with its byte order) and the row's shape, then the row's raw bytes
    in C order. Two arrays with the same numbers but another dtype encode differently."""
    a = np.asarray(values)
    if a.ndim == 0 or a.shape[0] != n_users:
        raise TypeError(
            f"field {name!r} has shape {a.shape}, not one row per user ({n_users} users): "
            "declare the oracle's encode_reports"
        )
    if a.dtype.hasobject:
        raise TypeError(f"field {name!r} holds Python objects (dtype object): declare the oracle's encode_reports")
    head = _header(f"{name}:{a.dtype.str}:{a.shape[1:]}")
    body = np.ascontiguousarray(a).reshape(n_users, -1).view(np.uint8).reshape(n_users, -1)
    return np.concatenate([np.broadcast_to(head, (n_users, head.size)), body], axis=1)


def _scalar_field(name: str, value: Any, n_users: int) -> np.ndarray:
    """A field shared by the whole chunk (``None``, a number, a string): sent by every user."""
    if value is not None and not isinstance(value, (bool, int, float, str, np.generic)):
        raise TypeError(
            f"field {name!r} is a {type(value).__name__}, neither an array with one row per user nor a "
            "number or string: declare the oracle's encode_reports"
        )
    head = _header(f"{name}={type(value).__name__}:{value!r}")
    return np.broadcast_to(head, (n_users, head.size))


def default_encoding(reports: Any, n_users: int) -> np.ndarray:
    """The canonical messages of the built-in report types, ``(n_users, width)`` ``uint8``.

    - a NumPy array: row ``u`` (``reports[u]``) is user ``u``'s report (:func:`array_rows`);
    - a dataclass instance: every field in declaration order, named, each an array with one row
      per user or a value shared by the chunk (``None``, a number, a string).

    Anything else (a list of objects, a sparse form whose arrays are not one row per user) raises
    ``TypeError``: its oracle declares ``encode_reports``.
    """
    if isinstance(reports, np.ndarray):
        return array_rows("reports", reports, n_users)
    if dataclasses.is_dataclass(reports) and not isinstance(reports, type):
        parts = [_header(type(reports).__qualname__)[None, :].repeat(n_users, axis=0)]
        for f in dataclasses.fields(reports):
            value = getattr(reports, f.name)
            if isinstance(value, np.ndarray) and value.ndim > 0:
                parts.append(array_rows(f.name, value, n_users))
            else:
                parts.append(_scalar_field(f.name, value, n_users))
        return np.concatenate(parts, axis=1)
    raise TypeError(
        f"reports of type {type(reports).__name__} have no default encoding (a NumPy array with one row "
        "per user, or a dataclass of such arrays): declare the oracle's encode_reports"
    )


def pack_messages(messages: Sequence[bytes], n_users: int) -> np.ndarray:
    """``(n_users, width)`` ``uint8`` from one ``bytes`` per user (length-prefixed, zero-padded).

    Only ``bytes`` are accepted: an object hashed by identity, or one whose bytes the harness would
    have to guess, is not a message."""
    if len(messages) != n_users:
        raise TypeError(f"encode_reports gave {len(messages)} messages for {n_users} users")
    bad = next((m for m in messages if not isinstance(m, (bytes, bytearray))), None)
    if bad is not None:
        raise TypeError(
            f"encode_reports must give bytes per user (what the client sends), got a {type(bad).__name__}: "
            "an object compared by identity or by repr is not a message"
        )
    width = max((len(m) for m in messages), default=0) + _LENGTH_BYTES
    out = np.zeros((n_users, width), dtype=np.uint8)
    for u, m in enumerate(messages):  # third-party convenience form; the built-ins give a matrix
        out[u, : _LENGTH_BYTES + len(m)] = np.frombuffer(len(m).to_bytes(_LENGTH_BYTES, "little") + bytes(m), np.uint8)
    return out


def as_message_matrix(encoded: Any, n_users: int) -> np.ndarray:
    """What ``encode_reports`` returned, as the ``(n_users, width)`` ``uint8`` matrix the audits read:
    a 2-D ``uint8`` array as it is, a sequence of ``bytes`` packed (:func:`pack_messages`)."""
    if isinstance(encoded, np.ndarray) and encoded.dtype == np.uint8 and encoded.ndim == 2:
        if encoded.shape[0] != n_users:
            raise TypeError(f"encode_reports gave {encoded.shape[0]} messages for {n_users} users")
        return encoded
    if isinstance(encoded, np.ndarray):
        raise TypeError(
            f"encode_reports must give a (n_users, width) uint8 array or one bytes per user, got an array "
            f"of dtype {encoded.dtype} and shape {encoded.shape}"
        )
    return pack_messages(list(encoded), n_users)


def common_width(chunks: Sequence[np.ndarray]) -> np.ndarray:
    """Message matrices of several chunks stacked, each zero-padded to the widest."""
    width = max((c.shape[1] for c in chunks), default=0)
    return np.concatenate([np.pad(c, ((0, 0), (0, width - c.shape[1]))) for c in chunks], axis=0)


def _row_hashes(m: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row (splitmix64 finalizer over its 8-byte words), vectorized."""
    pad = (-m.shape[1]) % 8
    words = np.ascontiguousarray(np.pad(m, ((0, 0), (0, pad)))).view(np.uint64)
    h = np.full(m.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
            h = h * np.uint64(0x94D049BB133111EB)
            h ^= h >> np.uint64(29)
    return h


def message_ids(messages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct messages, id of each user's message)``: equal bytes, equal id.

    Grouped by a 64-bit hash of each row (sorting raw bytes is ~20x slower), then verified byte for
    byte against each group's first row: a collision falls back to the exact sort, so two
    different messages never share an id."""
    m = np.ascontiguousarray(messages)
    if m.shape[1] == 0 or m.shape[0] == 0:
        return m[:1], np.zeros(m.shape[0], dtype=np.int64)
    _, first, inverse = np.unique(_row_hashes(m), return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    if np.array_equal(m, m[first[inverse]]):
        return m[first], inverse
    keys = m.view(np.dtype((np.void, m.shape[1]))).ravel()
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct.view(np.uint8).reshape(-1, m.shape[1]), inverse.reshape(-1).astype(np.int64)
