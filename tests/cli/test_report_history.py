"""``ldpbench report DIR1 DIR2 ...`` / ``--history``: each row across results, gate flags marked.

Synthetic history: four copies of one real leaderboard with their own commit ids, where one row
(oue · norm-sub at epsilon 1) regresses in the third and stays regressed in the fourth. The gate
flags it exactly once, between the second and the third, and the figure marks exactly that point.
"""

from __future__ import annotations

import json

import pytest

import ldpbench
from ldpbench.cli import main
from ldpbench.leaderboard.render import render
from ldpbench.report.history import discover_history, history_frame, load_points, write_history
from ldpbench.report.markdown import load_leaderboard_frame

SPEC = {
    "name": "hist",
    "seed": 6,
    "repeats": 5,
    "datasets": [{"zipf": {"d": 16, "n": 3000, "s": 1.3}}],
    "epsilons": [1, 4],
    "oracles": ["grr", "oue"],
    "pipelines": ["base", "norm-sub"],
    "metrics": ["mse"],
}
REGRESSED = ("zipf(d=16,n=3000,s=1.3)", "", 1.0, "oue", "norm-sub", "mse")
COMMITS = [c * 40 for c in "abcd"]


def _regress(row: dict) -> dict:
    key = (row["dataset"], row["users"], row["epsilon"], row["oracle"], row["pipeline"], row["metric"])
    if key == REGRESSED:
        row = {**row, **{k: row[k] * 3 for k in ("mean", "ci_low", "ci_high")}}
    return row


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Folders h/<name> in history order; their names sort otherwise, so only the manifests'
    creation times give the order."""
    root = tmp_path_factory.mktemp("history")
    ldpbench.run(SPEC, root / "run", workers=1)
    lb, manifest = load_leaderboard_frame(root / "run")
    rows = json.loads(render(lb, "json"))
    folders = []
    for i, name in enumerate(["z-first", "y-second", "x-third", "w-fourth"]):
        folder = root / "h" / name
        folder.mkdir(parents=True)
        mine = [_regress(r) for r in rows] if i >= 2 else rows
        (folder / "leaderboard.json").write_text(json.dumps(mine))
        (folder / "manifest.json").write_text(
            json.dumps({**manifest, "commit": COMMITS[i], "created": f"2026-01-0{i + 1}T00:00:00+0000"})
        )
        folders.append(folder)
    return folders


def test_the_gate_flag_sits_exactly_on_the_regressed_row_and_commit(history, tmp_path):
    result = write_history(history, tmp_path / "out")
    assert [(f.index, f.change.key, f.change.status, f.kind) for f in result.flags] == [
        (2, REGRESSED, "worse", "regression")
    ]
    assert result.flagged == 1
    # the stacked frame carries the mark on that one point only
    stacked = history_frame(result.points, result.flags)
    marked = stacked.filter(stacked["flag"].is_not_null())
    assert marked.select("_x", "oracle", "pipeline", "epsilon", "flag").rows() == [
        (2.0, "oue", "norm-sub", 1.0, "regression")
    ]
    assert [p.label for p in result.points] == [c[:8] for c in COMMITS]
    assert all(p.is_file() for p in result.figures) and result.figures[0].name == "history-mse.png"


def test_the_marks_are_what_ldpbench_compare_reports(history, capsys):
    codes = []
    for before, after in zip(history, history[1:]):
        capsys.readouterr()
        codes.append(main(["compare", str(before), str(after)]))
    assert codes == [0, 1, 0]


def test_history_from_the_command_line_with_html(history, tmp_path, capsys):
    capsys.readouterr()
    code = main(["report", *map(str, history), "--html", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "(4 results, 1 figures, 1 gate flags)" in err
    md = (tmp_path / "out" / "history.md").read_text()
    flagged = [line for line in md.splitlines() if line.startswith("| bbbbbbbb")]
    assert len(flagged) == 1
    assert flagged[0].startswith(
        "| bbbbbbbb → cccccccc | zipf(d=16,n=3000,s=1.3) |  | 1 | oue | norm-sub | mse | + worse |"
    )
    assert "(+200.0%)" in flagged[0]
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count('<table class="lb" id="flags">') == 1 and "bbbbbbbb → cccccccc" in page
    assert page.count("data:image/png;base64,") == 1


def test_history_discovers_subfolders_in_creation_order(history, tmp_path, capsys):
    parent = history[0].parent
    assert discover_history(parent) == history  # not the names' order (w, x, y, z)
    capsys.readouterr()
    assert main(["report", "--history", str(parent), "-o", str(tmp_path / "out")]) == 0
    assert "| 2 | `cccccccccccc` |" in (tmp_path / "out" / "history.md").read_text()


def test_the_same_commit_twice_is_told_apart_by_folder(history, tmp_path):
    points = load_points([history[0], history[0]])
    assert [p.label for p in points] == [f"aaaaaaaa\n{history[0].name}"] * 2


@pytest.mark.parametrize(
    "args, message",
    [
        (lambda h, t: ["--history", str(h[0])], "a history needs at least 2"),
        (lambda h, t: ["--history", str(h[0]), str(h[1])], "--history takes one folder"),
        (lambda h, t: [str(h[0]), str(t / "nowhere")], "no such file or directory"),
        (lambda h, t: [str(h[0]), str(h[1]), "--threshold", "mse:five"], "threshold"),
    ],
    ids=["one-folder", "history-with-two", "missing", "bad-threshold"],
)
def test_bad_histories_exit_2_with_a_message(history, tmp_path, capsys, args, message):
    capsys.readouterr()
    code = main(["report", *args(history, tmp_path), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_a_row_gone_from_the_later_folder_is_listed_as_missing_without_a_point(history, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    rows = [
        r
        for r in json.loads((history[1] / "leaderboard.json").read_text())
        if not (r["oracle"] == "grr" and r["pipeline"] == "base" and r["epsilon"] == 4)
    ]
    (gone / "leaderboard.json").write_text(json.dumps(rows))
    result = write_history([history[1], gone], tmp_path / "out")
    assert [(f.index, f.change.status, f.kind) for f in result.flags] == [(1, "missing", "regression")]
    stacked = history_frame(result.points, result.flags)
    assert stacked.filter(stacked["flag"].is_not_null()).is_empty()  # no point to mark
    md = (tmp_path / "out" / "history.md").read_text()
    assert "| bbbbbbbb → gone | zipf(d=16,n=3000,s=1.3) |  | 4 | grr | base | mse | ? missing | " in md
    assert "→ — | not in the current leaderboard (lost coverage" in md
