"""The leaderboard's rank and tied-with-best columns (ldpbench/stats/ties.py), and the spec's alpha."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import ldpbench
from ldpbench.leaderboard.aggregate import aggregate
from ldpbench.leaderboard.render import render


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
