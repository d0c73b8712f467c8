"""``ldpbench check-plugin`` on metrics and datasets, and ``--kind`` for a name of two kinds."""

from __future__ import annotations

import json

from ldpbench.cli import main


def test_a_metric_is_checked(capsys):
    assert main(["check-plugin", "l1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "metric" and {c["outcome"] for c in out["checks"]} == {"passed"}
    assert "check_metric_prefers_the_truth" in {c["check"] for c in out["checks"]}


def test_kind_picks_the_dataset_of_a_shared_name(capsys):
    # 'uniform' names a post-processor and a dataset; without --kind the post-processor is checked.
    assert main(["check-plugin", "uniform", "--kind", "dataset", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "dataset" and [c["check"] for c in out["checks"]][0] == "check_dataset_population"


def test_an_unknown_name_is_a_usage_error(capsys):
    assert main(["check-plugin", "no-such-plugin"]) == 2
    assert "unknown oracle, post-processor, metric, dataset, protocol or attack" in capsys.readouterr().err
