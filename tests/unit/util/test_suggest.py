"""Did-you-mean (ldpbench/util/suggest.py): a typo of one name is not taken for another."""

from __future__ import annotations


def test_a_typo_of_grr_is_not_taken_for_pgr():
    """'gr' is as similar to 'pgr' as to 'grr'; the suggestion is the name it starts like."""
    from ldpbench.util.suggest import closest

    assert closest("gr", ["grr", "pgr", "olh"]) == "grr"
    assert closest("pg", ["grr", "pgr"]) == "pgr"


def test_a_short_name_one_edit_away_is_suggested():
    # issue 29 round 2 (trial 2, shortfall 6): 'l2' is only 0.5 similar to 'l1' by ratio
    from ldpbench.util.suggest import closest

    assert closest("l2", ["mse", "l1", "ndcg"]) == "l1"
    assert closest("ms", ["mse", "l1"]) == "mse"  # a deletion
    assert closest("xyz", ["mse", "l1"]) is None  # nothing near: no guess


def test_an_unknown_plugin_with_nothing_close_lists_the_installed_names():
    from ldpbench.errors import UnknownPluginError

    few = str(UnknownPluginError("metric", "zzz", None, ["mse", "l1"]))
    assert few == "unknown metric 'zzz' (installed: l1, mse)"
    many = str(UnknownPluginError("oracle", "zzz", None, [f"o{i:02d}" for i in range(20)]))
    assert "(installed: o00, o01," in many and "o11 and 8 more; `ldpbench plugins --kind oracle` lists them)" in many
    assert str(UnknownPluginError("metric", "l2", "l1", ["l1"])) == "unknown metric 'l2' — did you mean 'l1'?"
