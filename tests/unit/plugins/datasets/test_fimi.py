"""The FIMI reader and the git blob hash that identifies a shipped file (plugins/datasets/_fimi.py)."""

from __future__ import annotations

import re

import pytest

from ldpbench.errors import UsageError
from ldpbench_plugins.datasets import real
from ldpbench_plugins.datasets._fimi import git_blob_sha1, parse_fimi


def test_fimi_parser():
    stats = parse_fimi(b"1 2 3 \n\n4 5 6 7\n1 8 1")
    assert stats.items.tolist() == [1, 2, 3, 4, 5, 6, 7, 1, 8, 1]
    assert (stats.transactions, stats.empty_lines, stats.repeated_in_transaction) == (3, 1, 1)
    with pytest.raises(UsageError, match=r":2: not a FIMI"):
        parse_fimi(b"1 2\n3,4\n", "f.dat")
    with pytest.raises(UsageError, match="empty"):
        parse_fimi(b"")


def test_git_blob_sha1_matches_git():
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert re.fullmatch(r"[0-9a-f]{40}", real.KOSARAK_BLOB_SHA1)
