"""Report figures (ldpbench/report/figures.py): facets, the line cap, one legend, log axes where they belong, clear refusals."""

from __future__ import annotations

import math
import zlib

import numpy as np
import polars as pl
import pytest
from support import FIGURE_ORACLES, FIGURE_PIPELINES, figure_leaderboard

from ldpbench.errors import UsageError
from ldpbench.leaderboard.identical import row_key
from ldpbench.report.figures import (
    DEFAULT_FACET,
    MAX_LINES,
    apply_only,
    build_panels,
    choose_facet,
    epsilon_positions,
    parse_facet,
    parse_only,
    plan_metric,
    plot_metric,
    use_log_scale,
)


def test_every_panel_holds_at_most_a_dozen_lines_and_the_parts_are_balanced():
    figure = plan_metric(figure_leaderboard(), "mse", "", facet=DEFAULT_FACET)
    # 26 pipelines per (dataset, oracle): three parts of 9, 9 and 8 lines, not 12 + 12 + 2
    assert [len(p.series) for p in figure.panels] == [9, 9, 8] * len(FIGURE_ORACLES)
    assert figure.panels[0].title == "zipf · grr (part 1 of 3)"
    assert all(len(p.series) <= MAX_LINES for p in figure.panels)
    # every series drawn exactly once per oracle
    names = [n for p in figure.panels[:3] for s in p.series for n in s.names]
    assert names == list(FIGURE_PIPELINES)


def test_one_shared_legend_per_file(tmp_path):
    pipelines = FIGURE_PIPELINES[:14]  # two parts per oracle
    lb = figure_leaderboard(oracles=("grr", "oue"), pipelines=pipelines, epsilons=(1.0,))
    figure = plot_metric(lb, "mse", "", tmp_path / "fig-mse.png", facet=DEFAULT_FACET)
    assert [d.path.name for d in figure.drawn] == ["fig-mse.png"] and figure.drawn[0].panels == 4
    assert figure.drawn[0].legend == list(pipelines)  # one entry per pipeline, not per oracle x pipeline
    assert figure.drawn[0].path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_by_default_the_more_numerous_of_oracles_and_pipelines_share_a_panel():
    # a new oracle compared with three built-ins, one pipeline: all four in one panel, one axis
    compared = figure_leaderboard(oracles=("my-rappor", "grr", "oue", "olh"), pipelines=("base",))
    assert choose_facet(compared) == ("dataset", "pipeline")
    panels = plan_metric(compared, "mse", "").panels
    assert [p.title for p in panels] == ["zipf · base"]
    assert [s.label for s in panels[0].series] == ["my-rappor", "grr", "oue", "olh"]
    # post-processors compared on two oracles: the post-processors share a panel
    assert choose_facet(figure_leaderboard(oracles=("grr", "oue"), pipelines=("a", "b", "c"))) == ("dataset", "oracle")
    # a tie: the oracles share it
    assert choose_facet(figure_leaderboard(oracles=("grr", "oue"), pipelines=("a", "b"))) == ("dataset", "pipeline")
    # more pipelines than a panel holds, oracles that fit: the oracles share the panels
    assert choose_facet(figure_leaderboard()) == ("dataset", "pipeline")


def test_facets_choose_panels_and_the_other_columns_name_the_lines():
    lb = figure_leaderboard(pipelines=("base", "norm-sub"))
    by_pipeline = plan_metric(lb, "mse", "", facet=("pipeline",))
    assert [p.title for p in by_pipeline.panels] == ["base", "norm-sub"]
    assert [s.label for s in by_pipeline.panels[0].series] == [f"zipf · {o}" for o in FIGURE_ORACLES]
    transposed = plan_metric(lb, "mse", "", facet=("oracle", "dataset"))
    assert [p.title for p in transposed.panels] == [f"{o} · zipf" for o in FIGURE_ORACLES]
    # one panel with every series: split, since 8 lines fit but 4 x 26 do not
    single = plan_metric(figure_leaderboard(), "mse", "", facet=())
    assert len(single.panels) == math.ceil(len(FIGURE_ORACLES) * len(FIGURE_PIPELINES) / MAX_LINES)


def test_identical_series_are_drawn_once_and_named_together(tmp_path):
    lb = figure_leaderboard(oracles=("grr", "oue"), pipelines=("power", "calibrate", "base"))
    values = {}
    for r in lb.iter_rows(named=True):
        # calibrate repeats power's numbers on grr only; on oue it differs in one repeat
        twin = "power" if r["pipeline"] == "calibrate" else r["pipeline"]
        seed = zlib.crc32(f"{r['oracle']}/{twin}/{r['epsilon']}".encode())
        repeats = np.random.default_rng(seed).random(4)
        if r["oracle"] == "oue" and r["pipeline"] == "calibrate":
            repeats[2] += 1e-3
        values[row_key(r)] = repeats
    figure = plot_metric(lb, "mse", "", tmp_path / "fig.png", values=values, evidence="same per-repeat values")
    grr, oue = figure.panels
    assert [s.label for s in grr.series] == ["power = calibrate", "base"]
    assert [s.label for s in oue.series] == ["power", "calibrate", "base"]
    assert figure.merged == [("zipf · grr", "power = calibrate")]
    assert figure.drawn[0].legend == ["power = calibrate", "base", "power", "calibrate"]


def test_log_y_where_the_metric_spans_decades_and_a_linear_epsilon_axis(tmp_path):
    wide = plot_metric(
        figure_leaderboard(oracles=("grr",), pipelines=("a", "b"), epsilons=(0.1, 1.0, 4.0)),
        "mse",
        "",
        tmp_path / "w.png",
    )
    assert wide.drawn[0].log_y
    narrow = figure_leaderboard(oracles=("grr",), pipelines=("a", "b"), epsilons=(3.0, 4.0))
    assert not plot_metric(narrow, "mse", "", tmp_path / "n.png").drawn[0].log_y
    # the x positions are the budgets themselves (linear), infinity one mean step past the largest
    positions = epsilon_positions([0.5, 1.0, 2.0, math.inf])
    assert positions == {0.5: 0.5, 1.0: 1.0, 2.0: 2.0, math.inf: 2.75}
    assert wide.panels[0].series[0].x == [0.1, 1.0, 4.0]
    assert not use_log_scale([0.0, 1.0, 100.0]) and not use_log_scale([-1.0, 50.0]) and use_log_scale([0.01, 1.0])


def test_failed_points_are_left_out_not_drawn_as_zero(tmp_path):
    lb = figure_leaderboard(oracles=("grr",), pipelines=("a",), epsilons=(1.0, 2.0))
    lb = lb.with_columns(mean=pl.when(pl.col("epsilon") == 2.0).then(math.nan).otherwise(pl.col("mean")))
    panels, _ = build_panels(lb.with_columns(_x=pl.col("epsilon")), ("oracle",), ("pipeline",), "_x")
    assert panels[0].series[0].x == [1.0]


def test_facet_and_only_refuse_unknown_names_with_a_suggestion():
    assert parse_facet(None) is None  # the report chooses per figure (choose_facet)
    assert parse_facet("oracle,dataset") == ("oracle", "dataset")
    assert parse_facet("none") == ()
    with pytest.raises(UsageError, match="unknown column 'oracles' \\(did you mean 'oracle'\\?\\)"):
        parse_facet("oracles")
    with pytest.raises(UsageError, match="at most two"):
        parse_facet("dataset,oracle,pipeline")
    assert parse_only(["oracle=grr,olh", "metric=mse", "oracle=hr"]) == {
        "oracle": ["grr", "olh", "hr"],
        "metric": ["mse"],
    }
    # labels carry parameters: their commas are not separators
    assert parse_only(["dataset=zipf(d=64,n=20000,s=1.3),retail", "metric=set-query(rho=10)"]) == {
        "dataset": ["zipf(d=64,n=20000,s=1.3)", "retail"],
        "metric": ["set-query(rho=10)"],
    }
    with pytest.raises(UsageError, match="expected COLUMN=VALUE"):
        parse_only(["oracle"])
    with pytest.raises(UsageError, match="unknown column 'metrics'"):
        parse_only(["metrics=mse"])
    lb = figure_leaderboard(pipelines=("base", "norm-sub"))
    assert set(apply_only(lb, {"oracle": ["grr", "hr"]})["oracle"].to_list()) == {"grr", "hr"}
    with pytest.raises(UsageError, match="no such pipeline in these results \\(did you mean 'norm-sub'\\?\\)"):
        apply_only(lb, {"pipeline": ["norm_sub"]})


def test_personalized_budgets_draw_bars_one_per_series(tmp_path):
    lb = figure_leaderboard(oracles=("grr", "oue"), pipelines=("base", "norm-sub"), epsilons=(1.0,))
    lb = lb.with_columns(users=pl.lit("mixed"), epsilon=pl.lit(math.nan))  # no single epsilon
    figure = plot_metric(lb, "mse", "mixed", tmp_path / "fig.png", facet=DEFAULT_FACET)
    assert [p.title for p in figure.panels] == ["zipf · grr", "zipf · oue"]
    assert [len(p.series) for p in figure.panels] == [2, 2] and figure.drawn[0].legend == ["base", "norm-sub"]
    assert figure.drawn[0].path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
