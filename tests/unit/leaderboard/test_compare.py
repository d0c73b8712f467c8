"""compare: threshold syntax, the noise-aware verdict per row, loading both sides, the report."""

from __future__ import annotations

import json
import math

import pytest

from ldpbench.errors import ExitCode, UsageError
from ldpbench.leaderboard.aggregate import aggregate
from ldpbench.leaderboard.compare import (
    DEFAULT_THRESHOLD,
    Threshold,
    Thresholds,
    compare,
    compare_rows,
    load_leaderboard,
    parse_thresholds,
    render_comparison,
    summary_line,
    verdict,
)
from ldpbench.leaderboard.render import render
from ldpbench.results.store import ResultsStore
from ldpbench.results.versioning import SCHEMA_VERSION


def lb_row(
    mean,
    stderr=0.01,
    metric="mse",
    gib=False,
    failed=0,
    repeats=10,
    fingerprint="f1",
    oracle="grr",
    pipeline="base",
    epsilon=1.0,
    users="",
    error=None,
):
    return dict(
        dataset="zipf",
        users=users,
        epsilon=epsilon,
        oracle=oracle,
        pipeline=pipeline,
        metric=metric,
        greater_is_better=gib,
        mean=mean,
        stderr=stderr,
        repeats=repeats,
        failed=failed,
        fingerprint=fingerprint,
        error=error,
    )


def verdict_of(base, cur, thresholds=None, z=3.0):
    return compare_rows(base, cur, thresholds or Thresholds(), z)


# -- thresholds --------------------------------------------------------------------------------


def test_threshold_syntax():
    t = parse_thresholds(["mse:5%", "l1:0.001", "2%", "set-query(rho=10):10%"])
    assert t.default == Threshold(0.02, relative=True)
    assert t.per_metric["mse"] == Threshold(0.05, relative=True)
    assert t.per_metric["l1"] == Threshold(0.001, relative=False)
    assert t.for_metric("set-query(rho=10)") == Threshold(0.10, relative=True)
    assert str(t.default) == "2%" and str(t.per_metric["l1"]) == "0.001"
    assert parse_thresholds([]).default == DEFAULT_THRESHOLD
    assert parse_thresholds(["0.5"]).default == Threshold(0.5, relative=False)


def test_a_plugin_name_threshold_covers_its_labels():
    t = parse_thresholds(["set-query:1%", "set-query(rho=10):3%"])
    assert t.for_metric("set-query(rho=5)") == Threshold(0.01, True)
    assert t.for_metric("set-query(rho=10)") == Threshold(0.03, True)  # exact label wins
    assert t.for_metric("mse") == DEFAULT_THRESHOLD


@pytest.mark.parametrize("bad", ["mse:abc", "mse:-1%", ":5%", "mse:", "nan%", "inf", "mse:%", "5%%"])
def test_bad_threshold_syntax_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="threshold") as info:
        parse_thresholds([bad])
    assert info.value.exit_code == ExitCode.USAGE


def test_relative_and_absolute_threshold_tests():
    assert Threshold(0.05, True).exceeded(0.051, 1.0) and not Threshold(0.05, True).exceeded(0.049, -1.0)
    assert Threshold(0.05, True).exceeded(1e-9, 0.0)  # from zero any change is relative infinity
    assert Threshold(0.01, False).exceeded(-0.011, 100.0) and not Threshold(0.01, False).exceeded(0.009, 0)


# -- one row -----------------------------------------------------------------------------------


def test_worse_needs_both_threshold_and_noise():
    base = lb_row(1.0, stderr=0.01)
    assert verdict_of(base, lb_row(1.10, stderr=0.01)).status == "worse"  # 10% > 5%, 0.1 > 3*0.014
    within_noise = verdict_of(base, lb_row(1.10, stderr=0.05))  # 0.1 < 3*sqrt(.01²+.05²) = 0.153
    assert within_noise.status == "unchanged" and "noise" in within_noise.reason
    within_threshold = verdict_of(lb_row(1.0, stderr=1e-4), lb_row(1.03, stderr=1e-4))  # 3% < 5%
    assert within_threshold.status == "unchanged" and "5%" in within_threshold.reason


def test_z_sets_how_many_standard_errors_count():
    base, cur = lb_row(1.0, stderr=0.02), lb_row(1.1, stderr=0.02)  # |Δ| = 0.1 = 3.54 σ
    assert verdict_of(base, cur, z=3).status == "worse"
    assert verdict_of(base, cur, z=4).status == "unchanged"


def test_direction_comes_from_greater_is_better():
    up = verdict_of(lb_row(0.5, gib=True, metric="ndcg"), lb_row(0.6, gib=True, metric="ndcg"))
    down = verdict_of(lb_row(0.5, gib=True, metric="ndcg"), lb_row(0.4, gib=True, metric="ndcg"))
    assert (up.status, up.mark, down.status, down.mark) == ("better", "-", "worse", "+")
    assert verdict_of(lb_row(0.5), lb_row(0.4)).status == "better"  # lower mse is better


def test_absolute_threshold_per_metric():
    t = parse_thresholds(["mse:0.2"])
    assert verdict_of(lb_row(1.0), lb_row(1.15), t).status == "unchanged"
    assert verdict_of(lb_row(1.0), lb_row(1.25), t).status == "worse"


def test_one_repeat_falls_back_to_the_threshold():
    change = verdict_of(lb_row(1.0, stderr=math.nan, repeats=1), lb_row(1.2, stderr=math.nan, repeats=1))
    assert change.status == "worse" and "unknown" in change.reason
    assert verdict_of(lb_row(1.0, stderr=math.nan), lb_row(1.02, stderr=math.nan)).status == "unchanged"


def test_newly_failing_wins_over_everything():
    now = lb_row(1.0, failed=2, repeats=8, error="ValueError: bad", fingerprint="f2")
    change = verdict_of(lb_row(1.0), now)
    assert (change.status, change.mark) == ("failing", "!")
    assert "2 of 10 repeats fail: ValueError: bad" in change.reason
    all_failed = verdict_of(lb_row(1.0), lb_row(math.nan, failed=10, repeats=0, stderr=math.nan))
    assert all_failed.status == "failing"


def test_failing_in_both_is_not_a_new_regression():
    change = verdict_of(lb_row(math.nan, failed=3, repeats=0), lb_row(math.nan, failed=3, repeats=0))
    assert change.status == "unchanged" and "no successful repeat" in change.reason


@pytest.mark.parametrize("before, after", [(1, 20), (3, 15), (1, 2)])
def test_more_failed_repeats_is_a_regression(before, after):
    # A plugin that raises is a bug, not noise: a rise in failed repeats fails the gate even when
    # no repeat succeeds any more (the mean is NaN) or the baseline already failed a few.
    base = lb_row(1.0, failed=before, repeats=20 - before, error="RuntimeError: old")
    now = lb_row(math.nan if after == 20 else 1.0, failed=after, repeats=20 - after, error="RuntimeError: new")
    change = verdict_of(base, now)
    assert (change.status, change.mark) == ("more failures", "!")
    assert f"{after} of 20 repeats fail, {before} of 20 in the baseline: RuntimeError: new" == change.reason
    result = compare([base], [now])
    assert result.regressed and result.regressions == result.changes
    assert render_comparison(result, "table").startswith("REGRESSION: 1 with more failures")


def test_as_many_or_fewer_failures_is_not_a_regression():
    assert verdict_of(lb_row(1.0, failed=3, repeats=17), lb_row(1.0, failed=3, repeats=17)).status == "unchanged"
    assert verdict_of(lb_row(1.0, failed=15, repeats=5), lb_row(1.0, failed=3, repeats=17)).status == "unchanged"
    # The same share of failures over twice the repeats is not "more failures".
    assert verdict_of(lb_row(1.0, failed=1, repeats=19), lb_row(1.0, failed=2, repeats=38)).status == "unchanged"


def test_no_longer_failing_is_fixed():
    assert verdict_of(lb_row(math.nan, failed=3, repeats=0), lb_row(1.0)).status == "fixed"
    assert verdict_of(lb_row(5.0, failed=1, repeats=9), lb_row(1.0)).mark == "-"


def test_a_fixed_row_that_got_much_worse_is_worse():
    """Reproduction (issue 28): 1 of 20 repeats failed in the baseline, none now, and the mean is
    100x worse: the gate said "fixed" and passed."""
    change = verdict_of(lb_row(0.003, stderr=1e-4, failed=1, repeats=19), lb_row(0.3, stderr=1e-2, repeats=20))
    assert change.status == "worse" and "failures fixed" in change.reason
    better = verdict_of(lb_row(0.3, stderr=1e-2, failed=1, repeats=19), lb_row(0.003, stderr=1e-4, repeats=20))
    assert better.status == "fixed"
    assert verdict_of(lb_row(1.0, failed=1, repeats=19), lb_row(1.0, repeats=20)).status == "fixed"


def test_fewer_repeats_than_the_baseline_are_not_comparable():
    """Reproduction (issue 28): a row whose repeats dropped from 20 to 1 has no noise estimate
    and passed on the threshold alone; the gate must say it no longer measures what it did."""
    change = verdict_of(lb_row(1.0, repeats=20), lb_row(1.0, stderr=math.nan, repeats=1))
    assert change.status == "not comparable" and "1 repeats, 20 in the baseline" in change.reason
    assert compare([lb_row(1.0, repeats=20)], [lb_row(1.0, stderr=math.nan, repeats=1)]).regressed
    assert verdict_of(lb_row(1.0, repeats=20), lb_row(1.0, repeats=40)).status == "unchanged"  # more: fine


def test_a_different_fingerprint_is_not_comparable():
    change = verdict_of(lb_row(1.0), lb_row(2.0, fingerprint="f2"))
    assert (change.status, change.mark) == ("not comparable", "x")


@pytest.mark.parametrize("side", ["baseline", "current", "both"])
def test_a_row_without_a_fingerprint_is_not_comparable(side):
    """Reproduction (issue 28): a row with no fingerprint was compared as if it measured the same."""
    base = lb_row(1.0, fingerprint=None if side in ("baseline", "both") else "f1")
    cur = lb_row(1.0, fingerprint=None if side in ("current", "both") else "f1")
    change = verdict_of(base, cur)
    assert change.status == "not comparable" and "no fingerprint" in change.reason
    assert compare([base], [cur]).regressed
    assert not compare([base], [cur], allow_not_comparable=True).regressed
    assert verdict_of(lb_row(1.0), lb_row(2.0, gib=True)).status == "not comparable"


def test_identical_rows_are_unchanged_without_a_reason():
    change = verdict_of(lb_row(1.0), lb_row(1.0))
    assert change.status == "unchanged" and change.reason == "" and change.delta == 0


def test_infinite_means_do_not_crash():
    assert verdict_of(lb_row(math.inf), lb_row(math.inf)).status == "unchanged"
    assert verdict_of(lb_row(1.0), lb_row(math.inf)).status == "worse"


# -- what the gate can see -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "cur", "thresholds", "expected"),
    [
        (lb_row(1.0, stderr=0.01), lb_row(1.0, stderr=0.01), (), 5 * math.sqrt(2) * 0.01),  # noise decides
        (lb_row(2.0, stderr=1e-4), lb_row(2.0, stderr=1e-4), (), 0.05 * 2.0),  # the 5% threshold decides
        (lb_row(1.0, stderr=1e-4), lb_row(1.0, stderr=1e-4), ("mse:0.3",), 0.3),  # an absolute one
        (lb_row(1.0, stderr=math.nan), lb_row(1.0, stderr=math.nan), (), 0.05),  # one repeat: threshold alone
        (lb_row(-4.0, stderr=0.1, gib=True), lb_row(-4.0, stderr=0.2, gib=True), (), 5 * math.sqrt(0.05)),
    ],
)
def test_the_detectable_change_is_the_edge_of_the_verdict(base, cur, thresholds, expected):
    """The reported detectable change is exactly where the verdict flips: 1% less passes, 1% more
    is flagged, in either direction."""
    parsed = parse_thresholds(thresholds)
    row = compare_rows(base, cur, parsed, 5.0)
    assert row.detectable == pytest.approx(expected, rel=1e-12)
    assert row.detectable_relative == pytest.approx(expected / abs(base["mean"]), rel=1e-12)
    for sign in (1, -1):
        for factor, flagged in ((0.99, False), (1.01, True)):
            moved = dict(cur, mean=cur["mean"] + sign * factor * expected)
            status = compare_rows(base, moved, parsed, 5.0).status
            assert (status != "unchanged") is flagged, (sign, factor, status)


def test_rows_not_compared_numerically_have_no_detectable_change():
    assert math.isnan(verdict_of(lb_row(1.0), lb_row(1.0, failed=1, repeats=9)).detectable)  # failing
    assert math.isnan(verdict_of(lb_row(1.0), lb_row(2.0, fingerprint="f2")).detectable)  # not comparable
    assert math.isnan(verdict_of(lb_row(1.0), lb_row(math.nan)).detectable)  # NaN now
    zero = verdict_of(lb_row(0.0, stderr=0.01), lb_row(0.0, stderr=0.01), z=5)
    assert zero.detectable == pytest.approx(5 * math.sqrt(2) * 0.01) and math.isnan(zero.detectable_relative)


def test_the_report_says_what_each_row_and_the_whole_gate_could_see():
    base = [lb_row(1.0, stderr=0.01), lb_row(1.0, stderr=0.05, oracle="oue"), lb_row(1.0, stderr=1e-4, oracle="olh")]
    result = compare(base, [dict(r) for r in base] + [lb_row(1.0, oracle="hr")])
    # 7.1%, 35% and the 5% threshold: median 7.1%; the new row (no baseline) has none.
    line = render_comparison(result, "table").splitlines()[0]
    assert line.endswith("; detectable change: median 7.1% of the baseline mean, 5.0% to 35% over 3 rows")
    table = render_comparison(result, "markdown")
    header = [c.strip() for c in table.splitlines()[2].strip("|").split("|")]
    assert header[header.index("change") + 1] == "detectable"
    cells = {
        r.split("|")[4].strip(): r.split("|")[header.index("detectable") + 1].strip() for r in table.splitlines()[4:]
    }
    assert cells == {"grr": "±7.1%", "oue": "±35%", "olh": "±5.0%", "hr": ""}
    doc = json.loads(render_comparison(result, "json"))
    assert doc["detectable"] == {
        "rows": 3,
        "median": pytest.approx(5 * math.sqrt(2) * 0.01),
        "smallest": pytest.approx(0.05),
        "largest": pytest.approx(5 * math.sqrt(2) * 0.05),
    }
    by_oracle = {r["oracle"]: r for r in doc["rows"]}
    assert by_oracle["oue"]["detectable_relative"] == pytest.approx(5 * math.sqrt(2) * 0.05)
    assert by_oracle["hr"]["detectable"] is None  # NaN is written as null
    assert summary_line(result).endswith(
        "1 new; detectable change: median 7.1% of the baseline mean, 5.0% to 35% over 3 rows"
    )
    # Nothing compared: nothing claimed.
    assert "detectable" not in verdict(compare(base, [], allow_missing=True))
    assert json.loads(render_comparison(compare([], []), "json"))["detectable"] is None


def test_an_overflowing_noise_term_fails_the_gate():
    """Reproduction (issue 28): repeats of a finite 1e100 gave mean 4.4e198, stderr inf, and the
    gate said `OK: 1 unchanged`: an infinite noise term hides every change."""
    change = verdict_of(lb_row(0.0037, stderr=1e-4), lb_row(4.4e198, stderr=math.inf))
    assert change.status == "worse" and "noise term" in change.reason
    assert compare([lb_row(0.0037)], [lb_row(4.4e198, stderr=math.inf)]).regressed
    with pytest.raises(UsageError, match="standard error of inf"):
        compare([lb_row(0.0037, stderr=math.inf)], [lb_row(0.0037)])


def test_a_huge_standard_error_does_not_crash_the_gate():
    """Reproduction (issue 28): squaring a stderr of 1e200 raised OverflowError (exit 4)."""
    change = verdict_of(lb_row(1e200, stderr=1e200), lb_row(1e200, stderr=1e200), z=5)
    assert change.status == "unchanged" and change.noise == pytest.approx(5 * math.sqrt(2) * 1e200)
    assert verdict_of(lb_row(1.0), lb_row(1.7e308, stderr=1.7e308), z=5).status == "worse"  # noise overflows
    assert verdict_of(lb_row(-1.7e308), lb_row(1.7e308), z=5).status == "worse"  # so does the difference


# -- whole leaderboards ------------------------------------------------------------------------


def test_compare_matches_rows_and_reports_missing_and_new():
    base = [lb_row(1.0, oracle="grr"), lb_row(1.0, oracle="oue"), lb_row(1.0, epsilon=math.nan, users="N")]
    cur = [
        lb_row(1.0, oracle="oue"),
        lb_row(1.5, oracle="grr"),
        lb_row(1.0, oracle="olh"),
        lb_row(1.0, epsilon=math.nan, users="N"),
    ]
    result = compare(base, cur)
    statuses = [(c.key[3], c.status) for c in result.changes]
    assert statuses == [("grr", "worse"), ("olh", "new"), ("oue", "unchanged"), ("grr", "unchanged")]
    assert result.regressed
    assert result.counts()["new"] == 1
    gone = compare(base, cur[:1] + cur[3:])
    # A baseline row no longer produced is lost coverage: it fails the gate unless allowed.
    assert [c.status for c in gone.changes].count("missing") == 1 and gone.regressed
    assert not compare(base, cur[:1] + cur[3:], allow_missing=True).regressed


def test_missing_rows_fail_the_gate_unless_allowed():
    base = [lb_row(1.0, oracle="grr"), lb_row(1.0, oracle="oue")]
    emptied = compare(base, [])
    assert emptied.regressed and [c.status for c in emptied.changes] == ["missing", "missing"]
    assert [c.mark for c in emptied.changes] == ["?", "?"]
    text = render_comparison(emptied, "markdown", only_changed=True)
    assert text.startswith("**REGRESSION**: 2 missing (threshold 5% (default); noise z = 5)")
    assert "--allow-missing if the spec changed on purpose" in text
    allowed = compare(base, [], allow_missing=True)
    assert not allowed.regressed and allowed.regressions == []
    assert render_comparison(allowed, "table").startswith(
        "OK: 2 missing (threshold 5% (default); noise z = 5; missing rows allowed)"
    )
    assert json.loads(render_comparison(allowed, "json"))["allow_missing"] is True
    # A missing row sorts with the regressions, before a mere "not comparable".
    mixed = compare(base, [lb_row(1.0, oracle="oue", fingerprint="f9")])
    assert [c.status for c in mixed.changes] == ["missing", "not comparable"]


def test_new_rows_stay_informational():
    result = compare([lb_row(1.0)], [lb_row(1.0), lb_row(1.0, oracle="olh")])
    assert not result.regressed and result.counts()["new"] == 1


def test_a_threshold_naming_no_metric_is_a_usage_error_with_a_suggestion():
    base = [lb_row(1.0), lb_row(0.5, metric="set-query(rho=10)")]
    with pytest.raises(
        UsageError,
        match=r"--threshold names a metric in neither leaderboard: 'mes' "
        r"\(did you mean 'mse'\?\)",
    ) as info:
        compare(base, base, parse_thresholds(["mes:1%"]))
    assert info.value.exit_code == ExitCode.USAGE
    assert "the metrics are mse, set-query, set-query(rho=10)" in str(info.value)
    with pytest.raises(UsageError, match="'zzz'; the metrics"):  # nothing close: no suggestion
        compare(base, base, parse_thresholds(["zzz:1%"]))
    # A metric present on one side only, a label, a plugin name and a bare default are all fine.
    compare(base, [lb_row(1.0)], parse_thresholds(["set-query(rho=10):2%", "set-query:1%", "mse:1%", "3%"]))
    with pytest.raises(UsageError, match="both leaderboards are empty"):
        compare([], [], parse_thresholds(["mse:1%"]))


def test_duplicate_rows_and_bad_z_are_usage_errors():
    with pytest.raises(UsageError, match="duplicate"):
        compare([lb_row(1.0), lb_row(2.0)], [lb_row(1.0)])
    with pytest.raises(UsageError, match="--z"):
        compare([lb_row(1.0)], [lb_row(1.0)], z=-1)


def test_report_markdown_lines():
    result = compare([lb_row(1.0), lb_row(2.0, oracle="oue")], [lb_row(1.5), lb_row(2.0, oracle="oue")])
    text = render_comparison(result, "markdown")
    lines = text.splitlines()
    assert lines[0].startswith("**REGRESSION**: 1 worse, 1 unchanged")
    assert lines[2].startswith("|    | dataset   | ε   | oracle   | pipeline   | metric   | baseline")
    assert lines[4].startswith("| +  | zipf      | 1   | grr      | base       | mse      | 1 ± 0.01 ")
    assert "+50.0%" in lines[4] and "worse: beyond 5% and 5σ noise" in lines[4]
    assert len(lines) == 6
    changed = render_comparison(result, "markdown", only_changed=True).splitlines()
    assert len(changed) == 5 and "oue" not in "".join(changed)
    ok = compare([lb_row(1.0)], [lb_row(1.0)])
    assert render_comparison(ok, "markdown", only_changed=True).splitlines() == [
        "**OK**: 1 unchanged (threshold 5% (default); noise z = 5); detectable change: 7.1% of the "
        "baseline mean (1 row)",
        "",
        "No changed rows.",
    ]


def test_report_json_and_table():
    result = compare([lb_row(1.0)], [lb_row(1.0, failed=1, repeats=9)])
    doc = json.loads(render_comparison(result, "json"))
    assert doc["verdict"] == "regression" and doc["counts"]["failing"] == 1
    assert doc["rows"][0]["mark"] == "!" and doc["rows"][0]["baseline_mean"] == 1.0
    table = render_comparison(result, "table")
    assert table.startswith("REGRESSION: 1 newly failing")
    assert any(line.startswith("!") for line in table.splitlines())
    with pytest.raises(UsageError):
        render_comparison(result, "html")


# -- loading -----------------------------------------------------------------------------------


def _results_dir(path, values):
    store = ResultsStore(path)
    for i, v in enumerate(values):
        store.append(
            [
                dict(
                    cell_id=f"c{i}",
                    dataset="zipf",
                    users="",
                    epsilon=math.inf,
                    oracle="grr",
                    pipeline="base",
                    metric="mse",
                    greater_is_better=False,
                    repeat=i,
                    value=v,
                    error=None,
                    simulation="aggregate",
                    n=10,
                    d=4,
                    fingerprint="f1",
                    elapsed=0.0,
                )
            ]
        )
    return path


def test_a_json_leaderboard_round_trips_into_compare(tmp_path):
    run = _results_dir(tmp_path / "run", [1.0, 1.1, 0.9, 1.05])
    path = tmp_path / "lb.json"
    path.write_text(render(aggregate(ResultsStore(run).load()), "json"))
    from_file = load_leaderboard(path)
    from_dir = load_leaderboard(run)
    assert from_file[0]["epsilon"] == math.inf and from_file[0]["mean"] == pytest.approx(1.0125)
    result = compare(from_file, from_dir)
    assert [c.status for c in result.changes] == ["unchanged"] and not result.regressed


def test_a_directory_falls_back_to_its_leaderboard_json(tmp_path):
    (tmp_path / "leaderboard.json").write_text(json.dumps([lb_row(1.0)]))
    assert load_leaderboard(tmp_path)[0]["mean"] == 1.0
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="neither"):
        load_leaderboard(empty)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"rows": []}', "not a JSON leaderboard"),
        ('[{"dataset": "zipf"}]', "row 0 lacks"),
        (json.dumps([lb_row("big")]), "mean must be a number"),
        (json.dumps([lb_row(1.0)]).replace('"stderr": 0.01', '"stderr": 1' + "0" * 400), "stderr must be a number"),
        (json.dumps([lb_row(1.0)]).replace('"mean": 1.0', '"mean": -1' + "0" * 400), "mean must be a number"),
        (json.dumps([lb_row(1.0)]).replace('"repeats": 10', '"repeats": 1' + "0" * 400), "repeats must be"),
    ],
)
def test_unreadable_leaderboards_are_usage_errors(tmp_path, content, message):
    path = tmp_path / "lb.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_leaderboard(path, "baseline")


def test_a_missing_file_names_the_side(tmp_path):
    with pytest.raises(UsageError, match="current .*no such file"):
        load_leaderboard(tmp_path / "nope.json", "current")


# -- schema version of a JSON leaderboard ------------------------------------------------------


def _versioned(version, *rows):
    return [{"schema_version": version, **r} for r in rows]


def test_json_leaderboard_rows_carry_the_store_schema_version_first(tmp_path):
    run = _results_dir(tmp_path / "run", [1.0, 1.1])
    data = json.loads(render(aggregate(ResultsStore(run).load()), "json"))
    assert isinstance(data, list) and all(next(iter(r)) == "schema_version" for r in data)
    assert {r["schema_version"] for r in data} == {SCHEMA_VERSION}
    path = tmp_path / "lb.json"
    path.write_text(json.dumps(data))
    # Read back like a results folder: the version is checked, then dropped from the rows.
    assert "schema_version" not in load_leaderboard(path)[0]
    assert [c.status for c in compare(load_leaderboard(path), load_leaderboard(run)).changes] == ["unchanged"]


def test_an_unversioned_leaderboard_is_read_as_the_pre_versioning_format(tmp_path):
    path = tmp_path / "lb.json"
    path.write_text(json.dumps([lb_row(1.0), lb_row(2.0, oracle="oue")]))
    assert [r["mean"] for r in load_leaderboard(path)] == [1.0, 2.0]


def test_an_unversioned_leaderboard_lacking_fields_says_regenerate(tmp_path):
    path = tmp_path / "lb.json"
    path.write_text(json.dumps([{k: v for k, v in lb_row(1.0).items() if k != "stderr"}]))
    with pytest.raises(
        UsageError,
        match=r"baseline .*lb.json: row 0 lacks stderr \(no schema_version: "
        r"written by an older ldpbench or by hand; regenerate it with `ldpbench run SPEC`",
    ):
        load_leaderboard(path, "baseline")


@pytest.mark.parametrize(
    "version, message",
    [
        (
            SCHEMA_VERSION + 1,
            rf"leaderboard has schema version {SCHEMA_VERSION + 1}, newer than the version "
            rf"{SCHEMA_VERSION} this ldpbench reads \(written by a newer ldpbench\): update ldpbench",
        ),
        (
            SCHEMA_VERSION - 1,
            rf"leaderboard has schema version {SCHEMA_VERSION - 1}, older .*written by an older "
            r"ldpbench.*regenerate it with `ldpbench run SPEC`.*scripts/update_ci_baseline.sh",
        ),
        ("1", "schema_version must be an integer, got '1'"),
        (True, "schema_version must be an integer, got True"),
    ],
)
def test_a_leaderboard_of_another_schema_is_a_usage_error(tmp_path, version, message):
    path = tmp_path / "lb.json"
    # A newer file may also lack today's fields: the version is what the message must name.
    newer = {k: v for k, v in lb_row(1.0).items() if k != "failed"}
    path.write_text(json.dumps(_versioned(SCHEMA_VERSION, lb_row(2.0, oracle="oue")) + _versioned(version, newer)))
    with pytest.raises(UsageError, match=message) as info:
        load_leaderboard(path, "baseline")
    assert str(info.value).startswith(f"baseline {path}: ")
    assert info.value.exit_code == ExitCode.USAGE
    # A folder holding only that leaderboard.json is refused the same way.
    (tmp_path / "leaderboard.json").write_text(path.read_text())
    with pytest.raises(UsageError, match=message):
        load_leaderboard(tmp_path, "current")


def test_a_folder_whose_repeats_overflow_fails_the_gate_on_either_side(tmp_path):
    """Reproduction (issue 28): a post-processor emitting a finite 1e100 in some repeats gives
    metric values near 1e200, a finite mean and an infinite stderr; `compare` said `OK`."""
    good = load_leaderboard(_results_dir(tmp_path / "good", [0.0037, 0.0035, 0.0039, 0.0036]))
    bad = load_leaderboard(_results_dir(tmp_path / "bad", [0.0037, 1e200, 0.0039, 1e200]))
    assert math.isfinite(bad[0]["mean"]) and math.isinf(bad[0]["stderr"])
    result = compare(good, bad)
    assert result.regressed and result.changes[0].status == "worse"
    with pytest.raises(UsageError, match="standard error of inf"):
        compare(bad, good)


def test_a_changed_simulation_mode_is_named_among_the_reasons():
    """Issue 29: rows of an aggregate and a per-user run differ in fingerprint; compare said only
    "a plugin's algorithm_version, its parameters or its data"."""
    base = dict(lb_row(1.0), simulation="aggregate")
    changed = verdict_of(base, dict(lb_row(1.0, fingerprint="f2"), simulation="per-user"))
    assert changed.status == "not comparable"
    assert changed.reason == "the simulation mode differs (aggregate in the baseline, per-user now)"
    plugin = verdict_of(base, dict(lb_row(1.0, fingerprint="f2"), simulation="aggregate"))
    assert plugin.reason.startswith("fingerprint differs")
    older = verdict_of(lb_row(1.0), dict(lb_row(1.0, fingerprint="f2"), simulation="per-user"))  # no column then
    assert older.reason.startswith("fingerprint differs")
