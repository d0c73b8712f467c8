"""The gate behind ``python -m ldpbench.testing.gate`` and the pytest plugin, end to end (the quick
exit codes: tests/cli/test_leaderboard_check.py).

- the module exits 3 when a plugin raised in some cells, and ``ldpbench run`` exits 3 too when a
  plugin fails to load (an import error, a name clash, a registration hook that raises), with the
  plugin's message and no traceback;
- refreshing a baseline (``--ldpbench-update-baseline``) is refused when a plugin failed in the
  run, with the failed rows listed, and nothing is written;
- baseline rows the run no longer produces fail the check unless ``allow_missing``;
- the fixture fails on a baseline of another schema version with the message, not a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import GATE_SPEC, foreign_pytest_plugins_off, newer_baseline, write_gate_spec

from ldpbench.errors import ExitCode
from ldpbench.results.versioning import SCHEMA_VERSION
from ldpbench.testing.gate import BaselineRefused, check_leaderboard

pytest_plugins = ["pytester"]


FIXTURES = Path(__file__).parent / "fixtures"  # flaky_plugins.py: post-processors halve, explode


BROKEN_PLUGINS = {
    "import": (
        "import no_such_module_for_ldpbench_tests\n",
        "failed to load: ModuleNotFoundError: No module named 'no_such_module_for_ldpbench_tests'",
    ),
    "clash": (
        textwrap.dedent('''\
        from ldpbench import hookimpl
        from ldpbench_plugins.oracles.grr import GRR


        class Impostor(GRR):
            """Registers under a built-in's name."""


        @hookimpl
        def ldpbench_register_oracles(registry):
            registry.register(Impostor)
        '''),
        "'grr'",
    ),
    "hook": (
        textwrap.dedent("""\
        from ldpbench import hookimpl


        @hookimpl
        def ldpbench_register_metrics(registry):
            raise RuntimeError("cannot register today")
        """),
        "raised in ldpbench_register_metrics: RuntimeError: cannot register today",
    ),
}


def run_module(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ldpbench.testing.gate", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_module_exit_3_when_a_plugin_raises_in_some_cells(tmp_path):
    write_gate_spec(tmp_path, GATE_SPEC.replace("[base, norm-sub]", "[base, explode]"))
    proc = run_module(tmp_path, "gate.yaml", "--out", "ci", "--workers", "1", "--plugins-dir", str(FIXTURES))
    assert proc.returncode == 3, proc.stderr
    assert "6 rows failed" in proc.stderr and "pipeline 'explode': RuntimeError: deliberate failure" in proc.stderr
    rows = json.loads((tmp_path / "ci" / "leaderboard.json").read_text())
    assert sorted((r["pipeline"], r["failed"]) for r in rows) == [
        ("base", 0),
        ("base", 0),
        ("explode", 3),
        ("explode", 3),
    ]


@pytest.mark.parametrize("kind", sorted(BROKEN_PLUGINS))
def test_a_plugin_that_fails_to_load_exits_3_in_run_and_in_the_module(tmp_path, run_cli, kind):
    source, message = BROKEN_PLUGINS[kind]
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "broken.py").write_text(source)
    write_gate_spec(tmp_path)
    for proc in (
        run_cli("run", "gate.yaml", "--plugins-dir", "plugs", "--workers", "1"),
        run_module(tmp_path, "gate.yaml", "--out", "ci", "--plugins-dir", "plugs"),
    ):
        assert proc.returncode == ExitCode.PLUGIN == 3, proc.stderr
        assert proc.stderr.startswith("ldpbench: error: ") and message in proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not (tmp_path / "ci").exists() and not (tmp_path / "results").exists()


# -- the gate: refreshing a baseline, missing rows ---------------------------------------------


def test_a_baseline_is_not_written_from_a_run_with_failed_rows(tmp_path):
    spec = write_gate_spec(tmp_path, GATE_SPEC.replace("[base, norm-sub]", "[base, explode]"))
    baseline = tmp_path / "baseline" / "leaderboard.json"
    with pytest.raises(BaselineRefused) as info:
        check_leaderboard(spec, baseline, out=tmp_path / "run", update=True, plugins_dirs=[FIXTURES])
    text = str(info.value)
    assert info.value.exit_code == ExitCode.PLUGIN
    assert text.startswith(f"refusing to write the baseline {baseline}: plugins failed in 6 result rows")
    listed = text.split("Failed leaderboard rows:\n", 1)[1].splitlines()
    assert listed == [
        f"  zipf(d=16,n=2000,s=1.2) ε={eps} grr explode mse: 3 of 3 repeats failed: "
        "pipeline 'explode': RuntimeError: deliberate failure"
        for eps in (1, 4)
    ]
    assert not baseline.parent.exists()  # neither the leaderboard nor its manifest
    # Without the failing pipeline the same call writes the baseline.
    clean = write_gate_spec(tmp_path, name="clean.yaml")
    check_leaderboard(clean, baseline, out=tmp_path / "run2", update=True)
    assert len(json.loads(baseline.read_text())) == 4 and (baseline.parent / "manifest.json").is_file()


def test_missing_baseline_rows_fail_the_check_unless_allowed(tmp_path):
    spec = write_gate_spec(tmp_path)
    baseline = tmp_path / "baseline.json"
    check_leaderboard(spec, baseline, out=tmp_path / "first", update=True)
    rows = json.loads(baseline.read_text())
    baseline.write_text(json.dumps(rows + [dict(rows[0], oracle="oue")]))  # a row the spec no longer makes
    strict = check_leaderboard(spec, baseline, out=tmp_path / "run")
    assert strict.regressed and strict.exit_code == 1
    assert strict.markdown.startswith("**REGRESSION**: 1 missing")
    relaxed = check_leaderboard(spec, baseline, out=tmp_path / "run", allow_missing=True)
    assert not relaxed.regressed and relaxed.comparison.counts()["missing"] == 1


GATE_TEST = """\
def test_gate(ldpbench_leaderboard):
    ldpbench_leaderboard("gate.yaml", "baseline/leaderboard.json", plugins_dirs=[{plugs!r}])
"""


def test_the_pytest_flag_refuses_a_baseline_with_failed_rows(pytester):
    # The fixture as a plugin repository uses it, in a pytest of its own.
    write_gate_spec(pytester.path, GATE_SPEC.replace("[base, norm-sub]", "[base, explode]"))
    pytester.makepyfile(test_gate=GATE_TEST.format(plugs=str(FIXTURES)))
    result = pytester.runpytest_subprocess(
        "--ldpbench-update-baseline", "-p", "no:cacheprovider", *foreign_pytest_plugins_off()
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ldpbench: refusing to write the baseline*plugins failed in 6 result rows*",
            "*grr explode mse: 3 of 3 repeats failed: pipeline 'explode': RuntimeError: deliberate failure",
        ]
    )
    assert not (pytester.path / "baseline").exists()


MISSING_TESTS = """\
def test_strict(ldpbench_leaderboard):
    ldpbench_leaderboard("gate.yaml", "baseline.json")


def test_relaxed(ldpbench_leaderboard):
    ldpbench_leaderboard("gate.yaml", "baseline.json", allow_missing=True)
"""


def test_the_fixture_fails_on_missing_rows_and_says_what_to_do(pytester):
    spec = write_gate_spec(pytester.path)
    baseline = pytester.path / "baseline.json"
    check_leaderboard(spec, baseline, out=pytester.path / "first", update=True)
    rows = json.loads(baseline.read_text())
    baseline.write_text(json.dumps(rows + [dict(rows[0], pipeline="power")]))
    pytester.makepyfile(test_missing=MISSING_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *foreign_pytest_plugins_off())
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_strict*",
            "*ldpbench leaderboard regressed against*baseline.json:",
            "*REGRESSION**: 1 missing*",
            "*Baseline rows are no longer produced. If the spec changed on purpose, refresh the baseline "
            "(pytest --ldpbench-update-baseline) or pass allow_missing=True.",
        ]
    )


NEWER_TEST = """\
def test_gate(ldpbench_leaderboard):
    ldpbench_leaderboard("gate.yaml", "baseline.json")
"""


def test_the_fixture_fails_on_a_baseline_of_another_schema_without_a_traceback(pytester):
    write_gate_spec(pytester.path)
    newer_baseline(pytester.path / "baseline.json")
    pytester.makepyfile(test_newer=NEWER_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *foreign_pytest_plugins_off())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*ldpbench: baseline *baseline.json: leaderboard has schema version {SCHEMA_VERSION + 1}, newer than "
            "the version*(written by a newer ldpbench): update ldpbench*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
