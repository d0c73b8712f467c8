"""The canonical encoding of reports: what a client sends, one message per user."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ldpbench.types.reports import as_message_matrix, common_width, default_encoding, message_ids, pack_messages


def _ids(*chunks):
    return message_ids(common_width([as_message_matrix(c, c.shape[0]) for c in chunks]))[1]


def test_an_array_row_is_a_users_message_and_its_order_counts():
    enc = default_encoding(np.array([[0, 1], [1, 0], [0, 1]]), 3)
    ids = message_ids(enc)[1]
    assert ids[0] == ids[2] != ids[1]  # (0, 1) and (1, 0) are different messages


def test_the_dtype_is_part_of_the_message():
    a = default_encoding(np.array([3, 3], dtype=np.int32), 2)
    b = default_encoding(np.array([3, 3], dtype=np.int64), 2)
    ids = _ids(a, b)
    assert ids[0] == ids[1] != ids[2] == ids[3]


@dataclass(frozen=True)
class _Two:
    y: np.ndarray
    extra: np.ndarray | None = None


def test_every_field_of_a_dataclass_is_sent():
    plain = default_encoding(_Two(np.array([1, 1])), 2)
    hinted = default_encoding(_Two(np.array([1, 1]), np.array([0, 1])), 2)
    ids = _ids(plain, hinted)
    assert ids[0] == ids[1] and len({ids[1], ids[2], ids[3]}) == 3


def test_reports_without_a_default_encoding_are_refused_by_name():
    with pytest.raises(TypeError, match="declare the oracle's encode_reports"):
        default_encoding([object(), object()], 2)
    with pytest.raises(TypeError, match="not one row per user"):
        default_encoding(_Two(np.arange(5)), 3)


def test_bytes_messages_are_packed_so_that_padding_never_merges_two():
    m = pack_messages([b"a", b"a\x00", b"a"], 3)
    ids = message_ids(m)[1]
    assert ids[0] == ids[2] != ids[1]
    with pytest.raises(TypeError, match="compared by identity"):
        as_message_matrix([object()], 1)
    with pytest.raises(TypeError, match="2 messages for 3 users"):
        as_message_matrix([b"a", b"b"], 3)


def test_chunks_of_different_widths_compare_equal_messages_equal():
    narrow, wide = pack_messages([b"ab"], 1), pack_messages([b"ab", b"abcdef"], 2)
    ids = message_ids(common_width([narrow, wide]))[1]
    assert ids[0] == ids[1] != ids[2]
