"""Paired ties with the best: Holm, the Wilcoxon decision, and the leaderboard columns."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import ldpbench
from ldpbench.leaderboard.aggregate import aggregate
from ldpbench.leaderboard.render import render
from ldpbench.stats.paired import compare_with_best, holm


def test_holm_matches_the_step_down_by_hand():
    # m = 3: sorted 0.01*3, 0.02*2 -> max(0.03, 0.04), 0.04*1 -> max(.., 0.04)
    got = holm([0.04, 0.01, 0.02, float("nan")])
    assert np.allclose(got[:3], [0.04, 0.03, 0.04]) and np.isnan(got[3])
    assert holm([0.6, 0.9]).tolist() == [1.0, 1.0]  # 0.6 * 2 capped at 1; monotone after it


def _noisy(seed: int, repeats: int, planted: float) -> np.ndarray:
    """Two rows sharing one noisy error per repeat (as pipelines of one oracle output do), the
    second multiplied by 1 + planted, each with a little noise of its own."""
    rng = np.random.default_rng(seed)
    shared = rng.gamma(4.0, 0.25, repeats)  # a skewed, MSE-like error
    own = rng.normal(0, 0.01, (2, repeats))
    return np.vstack([shared + own[0], shared * (1 + planted) + own[1]])


def test_identical_outputs_are_always_tied():
    row = np.random.default_rng(1).gamma(2.0, 1.0, 20)
    res = compare_with_best(np.vstack([row, row, row * 3]), greater_is_better=False)
    assert [r.tied_best for r in res] == [True, True, False]
    assert res[0].rank == res[1].rank == 1 and res[2].rank == 3


def test_a_planted_one_percent_difference_at_200_repeats_is_found():
    res = compare_with_best(_noisy(7, 200, 0.01), greater_is_better=False)
    assert res[0].rank == 1 and res[0].tied_best
    assert not res[1].tied_best and res[1].p_value < 0.05
    assert res[1].diff_low > 0  # the bootstrap interval of (row - best) excludes 0


@pytest.mark.slow
def test_no_difference_is_found_in_at_least_95_of_100_seeds():
    tied = sum(compare_with_best(_noisy(seed, 200, 0.0), greater_is_better=False)[1].tied_best for seed in range(100))
    assert tied >= 95


def test_direction_greater_is_better_and_failed_rows():
    v = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0], [np.nan] * 4])
    res = compare_with_best(v, greater_is_better=True)
    assert res[1].rank == 1 and res[0].rank == 2 and res[2].rank is None
    assert not res[2].tied_best and np.isnan(res[2].p_value)


def _rows(values: dict[str, list[float]]) -> list[dict]:
    out = []
    for pipeline, vals in values.items():
        for rep, v in enumerate(vals):
            out.append(
                {
                    "cell_id": f"c{rep}",
                    "dataset": "z",
                    "users": "",
                    "epsilon": 1.0,
                    "oracle": "oue",
                    "pipeline": pipeline,
                    "metric": "mse",
                    "greater_is_better": False,
                    "repeat": rep,
                    "value": v,
                    "error": None,
                    "notes": None,
                    "simulation": "aggregate",
                    "n": 10,
                    "d": 4,
                    "fingerprint": "f",
                    "elapsed": 0.0,
                }
            )
    return out


def test_every_leaderboard_format_carries_rank_and_tied_best():
    base = list(np.random.default_rng(2).gamma(2.0, 1.0, 12))
    lb = aggregate(_rows({"a": base, "b": base, "c": [3 * x + 1 for x in base]}))
    assert lb["rank"].to_list() == [1, 1, 3] and lb["tied_best"].to_list() == [True, True, False]
    rows = json.loads(render(lb, "json"))
    assert [(r["rank"], r["tied_best"]) for r in rows] == [(1, True), (1, True), (3, False)]
    csv = pl.read_csv(render(lb, "csv").encode())
    assert csv["tied_best"].to_list() == [True, True, False]

    def cells(text):  # the tables without the footer that explains the marks
        return text.rstrip("\n").rsplit("\n\n", 1)[0]

    assert "≈" not in cells(render(lb, "table"))  # both equal-mean rows are best (*), none merely tied
    # worse on average, but up in some repeats and down in others: not significant
    near = aggregate(_rows({"a": base, "b": [x * (1.002 if i % 2 else 0.999) for i, x in enumerate(base)]}))
    assert near["tied_best"].to_list() == [True, True] and near["best"].to_list() == [True, False]
    assert "≈" in cells(render(near, "table")) and "≈" in cells(render(near, "markdown"))


@pytest.mark.parametrize("repeats", [20])
def test_norm_sub_twice_is_tied_and_base_is_not(tmp_path, repeats):
    """The issue's reproduction: zipf d = 1,024, n = 10^5, OUE, eps 1, 20 repeats."""
    spec = {
        "name": "ties",
        "seed": 13,
        "repeats": repeats,
        "simulation": "aggregate",
        "datasets": [{"zipf": {"d": 1024, "n": 100000, "s": 1.5}}],
        "epsilons": [1],
        "oracles": ["oue"],
        "pipelines": ["norm-sub", ["norm-sub", "base"], "base"],
        "metrics": ["mse"],
    }
    lb = ldpbench.run(spec, tmp_path / "r", workers=1).leaderboard
    tied = dict(zip(lb["pipeline"].to_list(), lb["tied_best"].to_list()))
    assert tied == {"norm-sub": True, "norm-sub+base": True, "base": False}


def test_spec_alpha_sets_the_level_and_is_validated(tmp_path):
    from ldpbench.errors import SpecError

    spec = {
        "name": "a",
        "seed": 1,
        "repeats": 3,
        "datasets": [{"zipf": {"d": 16, "n": 1000}}],
        "epsilons": [1],
        "oracles": ["grr"],
        "pipelines": ["base"],
        "metrics": ["mse"],
    }
    with pytest.raises(SpecError) as exc:
        ldpbench.run({**spec, "alpha": 1.5}, tmp_path / "bad", workers=1)
    assert any(":" in p and "'alpha' must be a number between 0 and 1" in p for p in exc.value.problems)
    outcome = ldpbench.run({**spec, "alpha": 0.01}, tmp_path / "ok", workers=1)
    assert outcome.spec.alpha == 0.01
    manifest = json.loads((tmp_path / "ok" / "manifest.json").read_text())
    assert manifest["spec"]["alpha"] == 0.01
