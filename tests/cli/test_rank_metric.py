"""``ldpbench rank --metric`` takes a metric's plugin name as ``compare --threshold`` does (cli/rank_cmd.py)."""

from __future__ import annotations

import pytest

from ldpbench.cli.rank_cmd import metric_label
from ldpbench.errors import UsageError

LABELS = ["mse", "topk-mse(k=10)", "ndcg(k=5)", "ndcg(k=20)"]


def test_a_label_is_taken_as_it_is():
    assert metric_label(LABELS, "topk-mse(k=10)") == "topk-mse(k=10)"
    assert metric_label(LABELS, "mse") == "mse"
    assert metric_label(LABELS, None) is None


def test_a_plugin_name_with_one_label_is_that_label():
    assert metric_label(LABELS, "topk-mse") == "topk-mse(k=10)"


def test_a_plugin_name_with_two_labels_names_both():
    with pytest.raises(UsageError, match=r"ndcg\(k=5\), ndcg\(k=20\)"):
        metric_label(LABELS, "ndcg")


def test_an_unknown_name_is_left_for_the_ranking_to_refuse():
    assert metric_label(LABELS, "nope") == "nope"


def test_a_misspelt_metric_gets_a_suggestion():
    # issue 29 (trial shortfall 14): rank had no did-you-mean; compare and validate have one
    import polars as pl
    import pytest

    from ldpbench.errors import UsageError
    from ldpbench.stats.ranks import grid_ranks

    lb = pl.DataFrame({"metric": ["set-query(rho=10)", "mse"]})
    with pytest.raises(UsageError, match=r"did you mean 'set-query\(rho=10\)'\?"):
        grid_ranks(lb, "set-query(rho=1O)")
    with pytest.raises(UsageError, match="did you mean 'mse'"):
        grid_ranks(lb, "mse2")


def test_figure_and_diagram_names_have_no_equals_sign():
    from ldpbench.report.figures import slug

    assert slug("set-query(rho=10)") == "set-query_rho_10"
    assert slug("topk-mse(k=10) users 5") == "topk-mse_k_10_users_5"
