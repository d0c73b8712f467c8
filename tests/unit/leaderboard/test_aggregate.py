"""Leaderboard aggregation (ldpbench/leaderboard/aggregate.py): mean, stderr, Student-t CI, best, failures, order."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from support import result_row, result_series

from ldpbench.engine.rows import rows_to_frame
from ldpbench.leaderboard.aggregate import LEADERBOARD_COLUMNS, aggregate
from ldpbench.leaderboard.render import render

# t_{0.975} quantiles, from tables (not from the code under test)
T975 = {3: 3.182446305284263, 4: 2.7764451051977987}


def one(lb, **where):
    out = lb.filter(pl.all_horizontal([pl.col(k) == v for k, v in where.items()]))
    assert len(out) == 1, out
    return out.row(0, named=True)


def test_mean_stderr_and_student_t_interval():
    lb = aggregate(rows_to_frame(result_series([1.0, 2.0, 3.0, 4.0])))
    r = lb.row(0, named=True)
    sd = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 2, 3, 4]) / 3)
    assert r["mean"] == pytest.approx(2.5)
    assert r["stderr"] == pytest.approx(sd / 2)
    assert r["ci_low"] == pytest.approx(2.5 - T975[3] * sd / 2, rel=1e-12)
    assert r["ci_high"] == pytest.approx(2.5 + T975[3] * sd / 2, rel=1e-12)
    assert (r["repeats"], r["failed"], r["best"]) == (4, 0, True)
    assert (r["n"], r["d"], r["fingerprint"], r["error"]) == (100, 8, "f1", None)


def test_one_repeat_has_unknown_noise_not_zero():
    r = aggregate(result_series([0.3])).row(0, named=True)
    assert r["mean"] == 0.3 and r["repeats"] == 1
    assert math.isnan(r["stderr"]) and math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])


def test_failures_are_counted_and_left_out_of_the_mean():
    rows = result_series([1.0, 3.0, 2.0, 6.0, 4.0])
    rows[3].update(value=math.nan, error="ValueError: boom")
    r = aggregate(rows).row(0, named=True)
    assert (r["repeats"], r["failed"], r["error"]) == (4, 1, "ValueError: boom")
    assert r["mean"] == pytest.approx(2.5)
    sd = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 3, 2, 4]) / 3)
    assert r["ci_high"] - r["mean"] == pytest.approx(T975[3] * sd / 2)


def test_an_all_failed_row_has_nan_mean_and_is_never_best():
    rows = result_series([math.nan] * 3, oracle="bad", error="RuntimeError: x") + result_series(
        [5.0, 6.0], oracle="good"
    )
    lb = aggregate(rows)
    bad = one(lb, oracle="bad")
    assert math.isnan(bad["mean"]) and bad["repeats"] == 0 and bad["failed"] == 3
    assert bad["best"] is False
    assert one(lb, oracle="good")["best"] is True


def test_best_follows_the_metric_direction_per_epsilon_and_marks_ties():
    rows = []
    grid = {0.5: {"grr": 3.0, "oue": 2.0, "olh": 2.0}, 1.0: {"grr": 1.0, "oue": 2.0, "olh": 9.0}}
    for eps, values in grid.items():
        for oracle, v in values.items():
            rows += result_series([v, v], oracle=oracle, epsilon=eps, metric="mse", gib=False)
            rows += result_series([v, v], oracle=oracle, epsilon=eps, metric="ndcg", gib=True)
    lb = aggregate(rows)
    best = {
        (r["epsilon"], r["metric"]): sorted(
            o
            for o in lb.filter(
                (pl.col("epsilon") == r["epsilon"]) & (pl.col("metric") == r["metric"]) & pl.col("best")
            )["oracle"]
        )
        for r in lb.iter_rows(named=True)
    }
    assert best[(0.5, "mse")] == ["olh", "oue"]  # a tie: both marked
    assert best[(0.5, "ndcg")] == ["grr"]
    assert best[(1.0, "mse")] == ["grr"]
    assert best[(1.0, "ndcg")] == ["olh"]


def test_best_compares_pipelines_too_but_not_across_datasets():
    rows = result_series([1.0, 1.0], pipeline="base") + result_series([0.5, 0.5], pipeline="norm-sub")
    rows += result_series([9.0, 9.0], dataset="other")
    lb = aggregate(rows)
    assert one(lb, dataset="zipf", pipeline="norm-sub")["best"]
    assert not one(lb, dataset="zipf", pipeline="base")["best"]
    assert one(lb, dataset="other")["best"]


def test_personalized_budgets_group_on_nan_epsilon():
    rows = result_series([1.0, 4.0], epsilon=math.nan, users="N=1070")
    rows += result_series([2.0, 2.0], epsilon=math.nan, users="N=1070", pipeline="em")
    lb = aggregate(rows)
    assert len(lb) == 2 and lb["epsilon"].is_nan().all()
    assert lb["best"].to_list() == [False, True]


def test_groups_keep_first_appearance_order_not_alphabetical():
    rows = []
    for rep in range(2):
        for oracle in ("oue", "grr"):
            for pipeline in ("zeta", "alpha"):
                rows.append(result_row(1.0, repeat=rep, oracle=oracle, pipeline=pipeline))
    lb = aggregate(rows)
    assert list(zip(lb["oracle"], lb["pipeline"])) == [
        ("oue", "zeta"),
        ("oue", "alpha"),
        ("grr", "zeta"),
        ("grr", "alpha"),
    ]


def test_distinct_fingerprints_in_a_group_are_all_kept():
    rows = [
        result_row(1.0, 0, fingerprint="b"),
        result_row(1.0, 1, fingerprint="a"),
        result_row(1.0, 2, fingerprint="b"),
    ]
    assert aggregate(rows)["fingerprint"].to_list() == ["a|b"]


def test_empty_input_gives_an_empty_leaderboard_with_the_schema():
    lb = aggregate(rows_to_frame([]))
    assert lb.is_empty() and dict(lb.schema) == LEADERBOARD_COLUMNS
    assert render(lb, "table") == "No results.\n"
    assert json.loads(render(lb, "json")) == []
    assert render(lb, "csv").splitlines()[0].split(",") == list(LEADERBOARD_COLUMNS)


def test_order_puts_groups_in_spec_order_whatever_the_finishing_order():
    # cells finished out of order: eps 2 first, then eps 1
    rows = [
        result_row(1.0, epsilon=2.0, oracle="oue"),
        result_row(1.0, epsilon=1.0, oracle="grr"),
        result_row(1.0, epsilon=2.0, oracle="grr"),
        result_row(1.0, epsilon=1.0, oracle="oue"),
    ]
    spec_order = [r["cell_id"] for r in sorted(rows, key=lambda r: (r["epsilon"], r["oracle"] != "grr"))]
    lb = aggregate(rows, order=["unknown-cell", *spec_order])
    assert list(zip(lb["epsilon"], lb["oracle"])) == [(1.0, "grr"), (1.0, "oue"), (2.0, "grr"), (2.0, "oue")]
    first_seen = aggregate(rows, order=spec_order[:1])  # unlisted cells keep file order, after
    assert list(zip(first_seen["epsilon"], first_seen["oracle"]))[:2] == [(1.0, "grr"), (2.0, "oue")]


def test_numbers_do_not_depend_on_the_order_cells_finished_in():
    values = [0.1, 0.7, 0.2, 0.3, 1e-16, 0.6, 0.9]  # summed in order: 2.8; backwards: 2.8000000000000003
    rows = result_series(values)
    # the premise, with a sum whose order IEEE 754 fixes (polars' or Python's own may be compensated)
    from functools import reduce
    from operator import add

    assert reduce(add, values) != reduce(add, values[::-1])
    forward = aggregate(rows).row(0, named=True)
    backward = aggregate(rows[::-1]).row(0, named=True)
    for key in ("mean", "stderr", "ci_low", "ci_high"):
        assert forward[key] == backward[key]  # bit for bit


def test_the_simulation_mode_of_a_row_is_carried_into_the_leaderboard():
    rows = result_series([1.0, 2.0], oracle="grr") + result_series([1.0, 2.0], oracle="oue")
    for r in rows[:2]:
        r["simulation"] = "per-user"
    for r in rows[2:]:
        r["simulation"] = "aggregate"
    lb = aggregate(rows)
    assert lb["simulation"].to_list() == ["per-user", "aggregate"]
    older = [{k: v for k, v in r.items() if k != "simulation"} for r in result_series([1.0])]
    assert aggregate(older).row(0, named=True)["simulation"] is None  # rows written before the column


def test_longitudinal_budgets_are_columns_null_for_every_other_mechanism(tmp_path):
    """epsilon_inf / epsilon_1 (docs/longitudinal.md): carried from the rows of a longitudinal
    protocol (inf: the naive protocol's "no bound"), null elsewhere; a leaderboard written before
    the columns existed still compares against one that has them."""
    from ldpbench.leaderboard.compare import compare, verdict
    from ldpbench.leaderboard.load import load_leaderboard

    memo = [dict(result_row(v, i, "l-grr:round-1"), epsilon_inf=1.0, epsilon_1=0.5) for i, v in enumerate([1.0, 2.0])]
    naive = [
        dict(result_row(v, i, "l-naive:round-1"), epsilon_inf=math.inf, epsilon_1=1.0) for i, v in enumerate([1, 2.0])
    ]
    plain = [result_row(v, repeat=i) for i, v in enumerate([1.0, 2.0])]
    lb = aggregate(rows_to_frame(memo + naive + plain))
    got = {r["oracle"]: (r["epsilon_inf"], r["epsilon_1"]) for r in lb.iter_rows(named=True)}
    assert got["l-grr:round-1"] == (1.0, 0.5) and got["l-naive:round-1"] == (math.inf, 1.0)
    assert all(x is None for x in got["grr"])
    assert "l-grr: ε=1 → ε∞ 1, ε1 0.5; l-naive: ε=1 → ε∞ none, ε1 1" in render(lb)
    assert "budgets over rounds" not in render(aggregate(rows_to_frame(plain)))
    # Compare: a baseline without the columns (older leaderboard) against today's rows.
    new = json.loads(render(lb, "json"))
    old = [{k: v for k, v in r.items() if k not in ("epsilon_inf", "epsilon_1")} for r in new]
    assert new[2]["epsilon_inf"] is None and new[1]["epsilon_inf"] == math.inf
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(render(lb, "json"))
    result = compare(load_leaderboard(tmp_path / "old.json"), load_leaderboard(tmp_path / "new.json"))
    assert verdict(result).startswith("OK") and "3 unchanged" in verdict(result), verdict(result)
