"""Did-you-mean (ldpbench/util/suggest.py): a typo of one name is not taken for another."""

from __future__ import annotations


def test_a_typo_of_grr_is_not_taken_for_pgr():
    """'gr' is as similar to 'pgr' as to 'grr'; the suggestion is the name it starts like."""
    from ldpbench.util.suggest import closest

    assert closest("gr", ["grr", "pgr", "olh"]) == "grr"
    assert closest("pg", ["grr", "pgr"]) == "pgr"
