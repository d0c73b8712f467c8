"""Plugin warnings reach the leaderboard, each named by its row (ldpbench/leaderboard/notes.py)."""

from __future__ import annotations

import json

from support import result_series

from ldpbench.leaderboard.aggregate import aggregate
from ldpbench.leaderboard.notes import noted_rows
from ldpbench.leaderboard.render import render

CAP = "ibu hit its iteration cap (10) before its stopping rule: the last iterate, not the MLE"


def warned_rows():
    rows = result_series([1.0, 2.0, 3.0], oracle="grr", pipeline="ibu") + result_series([1.0, 2.0], oracle="oue")
    rows[0]["notes"] = CAP
    rows[2]["notes"] = CAP
    rows[1]["notes"] = "prior fit clamped"
    return rows


def test_the_leaderboard_counts_each_warning_over_the_rows_of_its_group():
    lb = aggregate(warned_rows())
    ibu = lb.row(0, named=True)
    assert ibu["notes"] == f"{CAP} (2 of 3 rows); prior fit clamped (1 of 3 rows)"
    assert lb.row(1, named=True)["notes"] is None


def test_the_warnings_survive_the_json_leaderboard():
    back = json.loads(render(aggregate(warned_rows()), "json"))
    rows = back["rows"] if isinstance(back, dict) else back
    assert [r["notes"] for r in rows][0].startswith(CAP)


def test_each_warning_names_its_row_once_across_metrics():
    rows = warned_rows()
    rows += [dict(r, metric="mae") for r in rows]
    noted = noted_rows(aggregate(rows))
    assert noted == [("grr · ibu at zipf, ε=1", f"{CAP} (2 of 3 rows); prior fit clamped (1 of 3 rows)")]


def test_a_user_group_is_named():
    rows = result_series([1.0], pipeline="ibu", users="half")
    rows[0]["notes"] = CAP
    assert noted_rows(aggregate(rows))[0][0] == "grr · ibu at zipf, users half, ε=1"


def test_a_leaderboard_without_the_column_has_no_warnings():
    assert noted_rows(aggregate(warned_rows()).drop("notes")) == []
