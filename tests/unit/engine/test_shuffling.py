"""ldpbench.engine.shuffling and the `shuffle:` option end to end: validate, cells, rows, the
leaderboard, the manifest (docs/shuffling.md)."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest
from support import result_row

from ldpbench.engine.rows import rows_to_frame
from ldpbench.engine.shuffling import (
    INFINITE_REASON,
    PERSONALIZED_REASON,
    PROTOCOL_REASON,
    central_columns,
    shuffle_record,
)
from ldpbench.errors import SpecError
from ldpbench.leaderboard.aggregate import LEADERBOARD_COLUMNS, aggregate
from ldpbench.leaderboard.render import central_note, render
from ldpbench.privacy.shuffle import fmt21_numerical, wang24_numerical
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec

SPEC = """\
name: shuf
repeats: 2
datasets:
  - zipf: {d: 16, n: 2000, s: 1.1}
epsilons: [1, 4]
oracles: [grr, blender]
metrics: [mse]
"""


def spec_with(tmp_path, plugins, extra, text=SPEC):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text) + extra)
    return load_spec(path, plugins), path


def test_cells_carry_the_setting_and_rows_the_central_epsilon(tmp_path, plugins):
    spec, _ = spec_with(tmp_path, plugins, "shuffle: {delta: 1.0e-6, bound: wang24-numerical}\n")
    assert spec.resolved["shuffle"] == {"delta": 1e-6, "bound": "wang24-numerical"}
    cells = {(c.mechanism.name, c.budget.epsilon): c for c in expand(spec)}
    grr = central_columns(cells["grr", 4], 100_000)
    assert grr == {"central_epsilon": wang24_numerical(4.0, 100_000, 1e-6), "central_bound": "wang24-numerical"}
    assert grr["central_epsilon"] == pytest.approx(0.118, abs=0.002)
    blender = central_columns(cells["blender", 4], 100_000)
    assert math.isnan(blender["central_epsilon"]) and blender["central_bound"] == PROTOCOL_REASON
    assert central_columns(cells["grr", 4], 0)["central_bound"].startswith("not covered")
    record = shuffle_record(spec)
    assert record["bound"] == "wang24-numerical" and len(record["assumptions"]) == 3
    assert {(c["mechanism"], c["covered"]) for c in record["coverage"]} == {("grr", True), ("blender", False)}
    json.dumps(record)  # the manifest is JSON


def test_without_the_option_nothing_changes(tmp_path, plugins):
    spec, _ = spec_with(tmp_path, plugins, "")
    assert spec.shuffle is None and "shuffle" not in spec.resolved and shuffle_record(spec) is None
    cell = next(iter(expand(spec)))
    assert central_columns(cell, 2000) == {}
    lb = aggregate([result_row(0.1, repeat=r) for r in range(2)])
    assert list(lb.columns) == list(LEADERBOARD_COLUMNS)
    assert central_note(lb) is None


def test_personalized_budgets_are_not_covered(tmp_path, plugins):
    text = SPEC.replace("epsilons: [1, 4]\n", "users:\n  - {epsilon: 1, count: 1000}\n  - {epsilon: 2, count: 1000}\n")
    spec, _ = spec_with(tmp_path, plugins, "shuffle: {delta: 1.0e-6}\n", text.replace("[grr, blender]", "[grr]"))
    cell = next(iter(expand(spec)))
    assert central_columns(cell, 2000)["central_bound"] == PERSONALIZED_REASON


@pytest.mark.parametrize(
    "extra, line, fragment",
    [
        ("shuffle: {delta: 0}\n", 8, "'shuffle.delta' must be a number between 0 and 1"),
        ("shuffle: {delta: 1.5}\n", 8, "'shuffle.delta' must be a number between 0 and 1"),
        ("shuffle: {delta: yes}\n", 8, "'shuffle.delta' must be a number"),
        ("shuffle:\n  bound: fmt21-numerical\n", 8, "'shuffle' needs 'delta'"),
        ("shuffle:\n  delta: 1.0e-6\n  bound: fmt21-numeric\n", 10, "did you mean 'fmt21-numerical'?"),
        ("shuffle:\n  delta: 1.0e-6\n  dleta: 1\n", 10, "unknown key 'dleta' in 'shuffle'"),
        ("shuffle: 1.0e-6\n", 8, "'shuffle' must be a mapping"),
    ],
)
def test_validate_refuses_bad_settings_at_their_line(tmp_path, plugins, extra, line, fragment):
    with pytest.raises(SpecError) as info:
        spec_with(tmp_path, plugins, extra)
    (msg,) = info.value.problems
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:{line}: ") and fragment in msg


def test_leaderboard_shows_the_columns_and_a_note_only_when_present():
    rows = []
    for oracle, eps, central, bound in [
        ("grr", 4.0, 0.1698, "fmt21-numerical"),
        ("blender:client", 4.0, math.nan, PROTOCOL_REASON),
    ]:
        for r in range(2):
            rows.append(
                {
                    **result_row(0.1 + r, repeat=r, oracle=oracle, epsilon=eps),
                    "central_epsilon": central,
                    "central_bound": bound,
                }
            )
    lb = aggregate(rows_to_frame(rows))
    assert list(lb.columns)[-2:] == ["central_epsilon", "central_bound"]
    assert lb["central_epsilon"][0] == pytest.approx(0.1698) and lb["central_bound"][1] == PROTOCOL_REASON
    note = central_note(lb)
    assert "zipf ε=4: 0.1698 (fmt21-numerical)" in note and f"blender:client: {PROTOCOL_REASON}" in note
    assert note in render(lb, "table") and "central_bound" in render(lb, "csv")


def test_the_quick_spec_validates_and_its_central_epsilon_is_the_published_one(plugins):
    spec = load_spec(Path(__file__).resolve().parents[3] / "specs" / "shuffle_quick.yaml", plugins)
    assert spec.shuffle.bound == "fmt21-numerical" and spec.shuffle.delta == 1e-6
    cell = next(c for c in expand(spec) if c.budget.epsilon == 4)
    assert central_columns(cell, 100_000)["central_epsilon"] == fmt21_numerical(4.0, 100_000, 1e-6)


def test_an_infinite_budget_is_not_covered(tmp_path, plugins):
    spec, _ = spec_with(tmp_path, plugins, "shuffle: {delta: 1.0e-6}\n", SPEC.replace("[1, 4]", "[inf]"))
    cell = next(c for c in expand(spec) if c.mechanism.name == "grr")
    columns = central_columns(cell, 2000)
    assert math.isnan(columns["central_epsilon"]) and columns["central_bound"] == INFINITE_REASON
