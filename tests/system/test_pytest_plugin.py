"""The pytest plugin (entry point ``pytest11 = ldpbench``), used the way a third-party repo uses it.

``pytester`` makes a throwaway project with its own spec and a test file that only names the
fixtures — nothing imported from ldpbench — so the fixtures must come from the installed entry
point. Then:

- ``--ldpbench-update-baseline`` writes the baseline (leaderboard + manifest) and passes;
- a plain run passes against that fresh baseline;
- a baseline made better than reality (what a regression looks like from the other side) fails
  the test, and the failure message is the Markdown comparison naming the rows that got worse;
- without a baseline the test fails with a message that says how to create one;
- ``ldpbench_rng`` gives the same numbers on every run, different ones per test and per
  ``--ldpbench-seed``;
- ``--ldpbench-seed`` also reseeds the leaderboard gate, over the test's own ``seed=``.
"""

from __future__ import annotations

import json
import textwrap

# pytester's in-process runs restore sys.modules afterwards, dropping modules first imported
# inside them; a second run would then import a second copy of polars whose classes do not match
# the first's. Importing the whole run path here keeps one copy for every run (and spares each
# run re-importing hypothesis, whose pytest plugin imports it at the end of every session).
import hypothesis  # noqa: F401,E402
import numpy.fft  # noqa: F401,E402  (a compiled extension: a second load in one process raises ImportError)
import pytest
from support import builtin_plugins

import ldpbench.runner  # noqa: F401,E402
import ldpbench.testing.gate  # noqa: F401,E402

pytest_plugins = ["pytester"]


builtin_plugins()  # imports every built-in plugin module


SPEC = """\
name: thirdparty
seed: 5
repeats: 10
datasets:
  - zipf: {d: 16, n: 4000, s: 1.2}
epsilons: [1, 4]
oracles: [grr, oue]
pipelines: [base, norm-sub]
metrics: [mse]
"""


LEADERBOARD_TEST = """\
def test_leaderboard(ldpbench_leaderboard):
    ldpbench_leaderboard("specs/thirdparty.yaml", "reports/baseline/leaderboard.json",
                         thresholds=["mse:5%"])
"""


RNG_TEST = """\
import json
from pathlib import Path


def _record(name, rng, seed):
    path = Path(__file__).with_name("draws.jsonl")
    with path.open("a") as fh:
        fh.write(json.dumps({"test": name, "seed": seed, "draws": rng.integers(0, 2**62, 4).tolist()}) + "\\n")


def test_one(ldpbench_rng, ldpbench_seed):
    _record("one", ldpbench_rng, ldpbench_seed)


def test_two(ldpbench_rng, ldpbench_seed):
    _record("two", ldpbench_rng, ldpbench_seed)
"""


@pytest.fixture
def project(pytester):
    pytester.mkdir("specs")
    (pytester.path / "specs" / "thirdparty.yaml").write_text(textwrap.dedent(SPEC))
    pytester.makepyfile(test_leaderboard_gate=LEADERBOARD_TEST)
    return pytester


def test_leaderboard_gate_against_a_fresh_and_a_too_good_baseline(project):
    baseline = project.path / "reports" / "baseline" / "leaderboard.json"

    missing = project.runpytest()
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*no baseline leaderboard at*--ldpbench-update-baseline*"])

    created = project.runpytest("--ldpbench-update-baseline")
    created.assert_outcomes(passed=1)
    rows = json.loads(baseline.read_text())
    assert len(rows) == 2 * 2 * 2 and all(r["repeats"] == 10 for r in rows)
    manifest_path = baseline.parent / "manifest.json"
    # It says where it wrote, so the author knows what to commit.
    created.stdout.fnmatch_lines([f"*baseline written to {baseline} and {manifest_path} (8 rows); commit both*"])
    manifest = json.loads(manifest_path.read_text())
    # The spec was resolved against the rootdir (an absolute path) but is recorded relative to
    # it: a committed manifest carries no home directory.
    assert manifest["specs"] == ["specs/thirdparty.yaml"]
    assert manifest["runs"]["thirdparty"]["spec"]["file"] == "specs/thirdparty.yaml"

    fresh = project.runpytest()
    fresh.assert_outcomes(passed=1)
    # A passing gate still says what it compared, in one line at the end of the session.
    fresh.stdout.fnmatch_lines(
        [
            "*ldpbench leaderboard*",
            "test_leaderboard_gate.py::test_leaderboard: OK: 8 compared, 0 better, 0 worse, 0 not comparable, "
            "0 missing, 0 new; detectable change: median *% of the baseline mean, *% to *% over 8 rows "
            "(baseline *leaderboard.json)",
        ]
    )

    # Reproduction (issue 10): a row whose fingerprint changed was "not comparable" and passed.
    # It is blind to the gate, so it fails the check unless allowed.
    blind = [dict(r, fingerprint="0" * 16) if r["oracle"] == "grr" else r for r in rows]
    baseline.write_text(json.dumps(blind))
    unseen = project.runpytest()
    unseen.assert_outcomes(failed=1)
    unseen.stdout.fnmatch_lines(
        [
            "*REGRESSION**: 4 not comparable*",
            "*--ldpbench-allow-not-comparable*",
            "*REGRESSION: 8 compared, 0 better, 0 worse, 4 not comparable, 0 missing*",
        ]
    )
    allowed = project.runpytest("--ldpbench-allow-not-comparable")
    allowed.assert_outcomes(passed=1)
    allowed.stdout.fnmatch_lines(["*OK: 8 compared, 0 better, 0 worse, 4 not comparable, 0 missing*"])

    # Under pytest-xdist the check runs in a worker; its summary line still reaches the terminal
    # (the suite itself runs with -n auto: a summary lost there would hide what the gate compared).
    # One worker is enough: the project has one test, which runs on one worker whatever their number.
    for args, outcome, line in [
        ((), {"failed": 1}, "*REGRESSION: 8 compared, 0 better, 0 worse, 4 not comparable, 0 missing*"),
        (("--ldpbench-allow-not-comparable",), {"passed": 1}, "*OK: 8 compared, 0 better, 0 worse, 4 not comparable*"),
    ]:
        distributed = project.runpytest_subprocess("-n", "1", *args)
        distributed.assert_outcomes(**outcome)
        distributed.stdout.fnmatch_lines(["*1 worker*", "*ldpbench leaderboard*", line])

    # Pretend the committed baseline was far better at OUE + norm-sub: reality now "regressed".
    for r in rows:
        if r["oracle"] == "oue" and r["pipeline"] == "norm-sub":
            r["mean"], r["stderr"] = r["mean"] / 10, r["stderr"] / 10
    baseline.write_text(json.dumps(rows))
    worse = project.runpytest()
    worse.assert_outcomes(failed=1)
    out = worse.stdout.str()
    assert "ldpbench leaderboard regressed against" in out
    assert "**REGRESSION**: 2 worse" in out and "noise z = 5" in out
    # pytest >= 9 repeats the whole multi-line message in the -ra summary: read the FAILURES section.
    failures = out.split("short test summary info")[0]
    changed = [line for line in failures.splitlines() if line.startswith("| +")]
    assert len(changed) == 2 and all(
        "| oue " in line and "| norm-sub " in line and "worse: beyond 5%" in line for line in changed
    )
    assert "Traceback" not in out


RESEED_TEST = """\
import json


def test_leaderboard(ldpbench_leaderboard):
    # seed=5 is the spec's own; --ldpbench-seed replaces it.
    result = ldpbench_leaderboard("specs/thirdparty.yaml", "reports/baseline/leaderboard.json", seed=5)
    if result.comparison is not None:
        with open("deltas.json", "w") as fh:
            json.dump([c.delta for c in result.comparison.changes], fh)
"""


def test_the_gate_is_reseeded_from_the_command_line(pytester):
    pytester.mkdir("specs")
    (pytester.path / "specs" / "thirdparty.yaml").write_text(textwrap.dedent(SPEC))
    pytester.makepyfile(test_reseed=RESEED_TEST)
    baseline = pytester.path / "reports" / "baseline" / "leaderboard.json"
    manifest = baseline.parent / "manifest.json"
    deltas = pytester.path / "deltas.json"

    pytester.runpytest("--ldpbench-update-baseline").assert_outcomes(passed=1)
    own = [r["mean"] for r in json.loads(baseline.read_text())]
    assert json.loads(manifest.read_text())["seed_override"] == 5
    # A baseline written under --ldpbench-seed records that seed and holds other numbers.
    pytester.runpytest("--ldpbench-update-baseline", "--ldpbench-seed", "77").assert_outcomes(passed=1)
    assert json.loads(manifest.read_text())["seed_override"] == 77
    assert [r["mean"] for r in json.loads(baseline.read_text())] != own

    # The same seed from the command line replays it exactly, and the summary says which seed ran.
    replay = pytester.runpytest("--ldpbench-seed", "77")
    replay.assert_outcomes(passed=1)
    assert set(json.loads(deltas.read_text())) == {0.0}
    replay.stdout.fnmatch_lines(
        ["*OK: 8 compared, 0 better, 0 worse*(baseline *leaderboard.json) under --ldpbench-seed 77"]
    )
    # Without it the test's own seed runs: other numbers, within the noise of the seed-77 baseline.
    own_seed = pytester.runpytest()
    own_seed.assert_outcomes(passed=1)
    assert all(d != 0 for d in json.loads(deltas.read_text()))
    assert "under --ldpbench-seed" not in own_seed.stdout.str()


def _draws(pytester, *args, tests=2):
    path = pytester.path / "draws.jsonl"
    path.unlink(missing_ok=True)
    pytester.runpytest(*args).assert_outcomes(passed=tests)
    return {r["test"]: (r["seed"], r["draws"]) for r in map(json.loads, path.read_text().splitlines())}


def test_ldpbench_rng_is_reproducible_and_distinct_per_test_and_seed(pytester):
    pytester.makepyfile(test_rng=RNG_TEST)
    first = _draws(pytester)
    again = _draws(pytester)
    assert first == again  # same numbers on every run
    assert first["one"] != first["two"]  # independent streams per test
    alone = _draws(pytester, "-k", "two", tests=1)  # running a test alone does not change its stream
    assert alone == {"two": first["two"]}
    other = _draws(pytester, "--ldpbench-seed", "1")
    assert other["one"] != first["one"] and other["two"] != first["two"]


def test_loading_the_plugin_does_not_load_the_conformance_kit():
    # Every pytest session in an environment with ldpbench installed imports the plugin; the kit
    # (SciPy stats, hypothesis: about 2 s) loads only when a test uses it.
    import subprocess
    import sys

    code = (
        "import sys, ldpbench.testing.pytest_plugin; "
        "print(sorted(m for m in ('ldpbench.testing.checks', 'hypothesis', 'scipy.stats') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
    import ldpbench.testing as kit
    from ldpbench.testing.checks import runner

    assert sorted(kit.__all__) == sorted([*kit._PUBLIC, "stats"])
    assert kit.check_oracle is runner.check_oracle
