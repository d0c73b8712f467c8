"""End to end: the real ``ldpbench`` command in a temp dir, its exit codes and its output."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

from ldpbench.results.versioning import SCHEMA_VERSION

FIXTURES = Path(__file__).parent / "fixtures"

SPEC = """\
name: tiny
seed: 11
repeats: 3
datasets:
  - zipf: {d: 32, n: 2000, s: 1.2}
epsilons: [1, 4]
oracles: [grr, oue]
pipelines: [base, base-pos]
metrics: [mse]
"""

REQUIRED = {"dataset", "epsilon", "oracle", "pipeline", "metric", "mean", "stderr", "ci_low", "ci_high", "repeats"}


def write(tmp_path, text, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_run_json_then_resume(tmp_path, run_cli):
    write(tmp_path, SPEC)
    first = run_cli("run", "spec.yaml", "--format", "json", "--out", "out", "--workers", "1")
    assert first.returncode == 0, first.stderr
    rows = json.loads(first.stdout)
    assert len(rows) == 1 * 2 * 2 * 2 * 1
    assert all(REQUIRED <= set(r) for r in rows)
    assert {r["repeats"] for r in rows} == {3}
    assert "12 run, 0 already done" in first.stderr
    # Still a bare list on stdout (issue 2); the schema version rides in every row, and the
    # folder's leaderboard.json is the same document.
    assert all(r["schema_version"] == SCHEMA_VERSION for r in rows)
    assert json.loads((tmp_path / "out" / "leaderboard.json").read_text()) == rows
    assert (tmp_path / "out" / "results.jsonl").is_file()
    assert (tmp_path / "out" / "manifest.json").is_file()

    second = run_cli("run", "spec.yaml", "--format", "json", "--out", "out", "--workers", "1")
    assert second.returncode == 0, second.stderr
    assert "0 run, 12 already done" in second.stderr
    assert json.loads(second.stdout) == rows


def test_same_numbers_for_any_worker_count(tmp_path, run_cli):
    write(tmp_path, SPEC)
    one = run_cli("run", "spec.yaml", "--format", "json", "--out", "a", "--workers", "1")
    two = run_cli("run", "spec.yaml", "--format", "json", "--out", "b", "--workers", "2")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert json.loads(one.stdout) == json.loads(two.stdout)


def test_formats(tmp_path, run_cli):
    write(tmp_path, SPEC)
    md = run_cli("run", "spec.yaml", "--format", "markdown", "--out", "o", "--workers", "1")
    assert md.returncode == 0 and "|" in md.stdout and "grr" in md.stdout
    csv = run_cli("run", "spec.yaml", "--format", "csv", "--out", "o", "--workers", "1")
    assert csv.returncode == 0 and csv.stdout.splitlines()[0].startswith("dataset,")
    table = run_cli("run", "spec.yaml", "--out", "o", "--workers", "1")
    assert table.returncode == 0 and "oue" in table.stdout


def test_failing_plugin_fails_only_its_rows(tmp_path, run_cli):
    shutil.copy(FIXTURES / "flaky_plugins.py", tmp_path / "flaky_plugins.py")
    (tmp_path / "plugs").mkdir()
    shutil.move(tmp_path / "flaky_plugins.py", tmp_path / "plugs" / "flaky_plugins.py")
    write(tmp_path, SPEC.replace("[base, base-pos]", "[base, halve, explode]"))
    res = run_cli("run", "spec.yaml", "--format", "json", "--out", "o", "--workers", "1", "--plugins-dir", "plugs")
    assert res.returncode == 3, res.stderr
    assert "deliberate failure" in res.stderr and "Traceback" not in res.stderr
    rows = json.loads(res.stdout)
    bad = [r for r in rows if r["pipeline"] == "explode"]
    good = [r for r in rows if r["pipeline"] != "explode"]
    assert bad and all(r["failed"] == 3 and r["mean"] is None for r in bad)
    assert good and all(r["failed"] == 0 and r["mean"] is not None for r in good)


def test_spec_cannot_load_code_by_itself(tmp_path, run_cli):
    (tmp_path / "plugs").mkdir()
    shutil.copy(FIXTURES / "flaky_plugins.py", tmp_path / "plugs" / "flaky_plugins.py")
    write(tmp_path, SPEC + "plugins_dir: plugs\n")
    res = run_cli("validate", "spec.yaml")
    assert res.returncode == 2
    assert "spec.yaml:10: the spec asks to load plugin code" in res.stderr
    ok = run_cli("validate", "spec.yaml", "--plugins-dir", "plugs")
    assert ok.returncode == 0, ok.stderr
    trusted = run_cli("validate", "spec.yaml", "--trust-spec-plugins")
    assert trusted.returncode == 0, trusted.stderr


def test_validate_reports_line_and_suggestion(tmp_path, run_cli):
    write(tmp_path, SPEC.replace("[base, base-pos]", "[base, base_pos]"))
    res = run_cli("validate", "spec.yaml")
    assert res.returncode == 2
    assert res.stderr.strip() == "spec.yaml:8: unknown postprocessor 'base_pos' — did you mean 'base-pos'?"
    good = write(tmp_path, SPEC, "good.yaml")
    ok = run_cli("validate", str(good))
    assert ok.returncode == 0 and "ok — 12 cells" in ok.stdout


def test_user_mistakes_never_print_tracebacks(tmp_path, run_cli):
    for args in (
        ["run", "missing.yaml"],
        ["validate", "missing.yaml"],
        ["describe", "nrom-sub"],
        ["run", "spec.yaml", "--workers", "-3"],
    ):
        write(tmp_path, SPEC)
        res = run_cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr, args


def test_plugins_listing(run_cli):
    res = run_cli("plugins", "--json")
    assert res.returncode == 0
    listing = json.loads(res.stdout)
    names = {(p["kind"], p["name"]) for p in listing}
    for oracle in ("grr", "olh", "oue", "hr"):
        assert ("oracle", oracle) in names
    assert all({"name", "kind", "distribution", "version", "module"} <= set(p) for p in listing)
    table = run_cli("plugins")
    assert table.returncode == 0 and "grr" in table.stdout and "distribution" in table.stdout


def test_describe(run_cli):
    res = run_cli("describe", "zipf")
    assert res.returncode == 0 and "Zipf" in res.stdout and "domain size" in res.stdout


def test_validate_counts_the_rows_a_run_stores_and_says_when_it_counts_per_output(tmp_path, run_cli):
    """An oracle spec: the count is the rows a run stores. A protocol gives rows per output (11 for
    ten rounds and their mean), which validate cannot know: it says its count is per output."""
    write(tmp_path, SPEC)
    said = run_cli("validate", "spec.yaml").stdout
    assert "ok — 12 cells, 24 result rows\n" in said and "per output" not in said
    assert run_cli("run", "spec.yaml", "--out", "out", "--workers", "1").returncode == 0
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == 1 + 24
    rounds = SPEC.replace("zipf: {d: 32, n: 2000, s: 1.2}", "zipf-rounds: {d: 8, n: 500, rounds: 10}")
    write(tmp_path, rounds.replace("oracles: [grr, oue]", "oracles: [l-grr]"), "rounds.yaml")
    said = run_cli("validate", "rounds.yaml").stdout
    assert "ok — 6 cells, 12 result rows per output" in said
    assert run_cli("run", "rounds.yaml", "--out", "out-rounds", "--workers", "1").returncode == 0
    assert len((tmp_path / "out-rounds" / "results.jsonl").read_text().splitlines()) == 1 + 12 * 11
