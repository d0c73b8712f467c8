"""The version floors in ``pyproject.toml`` are true: ldpbench works with the lowest versions they allow.

A throwaway virtual environment gets exactly those versions (uv's ``--resolution lowest-direct``:
every dependency we name at its floor, from PyPI), then runs what a newcomer runs (the quick start
and a report, HTML included), a slice of the unit tier that leans on polars, SciPy and matplotlib,
and collects every test module (the floors of the test extra: pytest, hypothesis). A floor that
became false because our code started using something newer fails here, not on a user's machine.
Where a floor is raised, ``pyproject.toml`` says why beside it.

uv's download cache is reused between runs, so after the first run this takes seconds of
installing (the environment itself is new every time: a floor is judged on a clean install).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version
from support import uv_binary

import ldpbench

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10, which pyproject allows: the same parser from PyPI (the test extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

#: Unit tests exercising the code paths whose libraries move fastest (polars frames in the
#: leaderboard, results and report; SciPy's statistics; matplotlib's figures; the CSV readers).
UNIT_SLICE = [
    "tests/unit/stats",
    "tests/unit/leaderboard",
    "tests/unit/results",
    "tests/unit/report",
    "tests/unit/util",
    "tests/unit/plugins/datasets",
]


#: Runs pytest over the whole of tests/ (every module collected) but only the tests under the
#: folders in ``argv[1]`` (comma-separated, each ending in ``/``): the rest are deselected, as
#: ``-k`` would, after collection. pytest.main takes the plugin object itself: no file to import.
SLICE_RUNNER = """
import sys

import pytest

folders = tuple(sys.argv[1].split(","))


class Slice:
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        dropped = [item for item in items if not item.nodeid.startswith(folders)]
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.nodeid.startswith(folders)]


sys.exit(pytest.main(sys.argv[2:], plugins=[Slice()]))
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _run(args: list[str | Path], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


def _floors() -> dict[str, str]:
    """Each declared dependency's floor (runtime and test extra), by normalised name:
    ``{"numpy": "2.0.1", ..., "ruff": "0.17.6"}`` (a pin is its own floor)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floors = {}
    for line in project["dependencies"] + project["optional-dependencies"]["test"]:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue  # not for this Python (tomli below 3.11): the resolver installs no floor of it
        (lower,) = [s.version for s in req.specifier if s.operator in (">=", "==")]
        floors[req.name.lower().replace("_", "-")] = lower
    return floors


def _installed(python: Path, cwd: Path) -> dict[str, str]:
    code = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): d.version for d in m.distributions()}))"
    return json.loads(_run([python, "-c", code], cwd).stdout)


def test_the_lowest_allowed_versions_run_the_quick_start_a_report_and_the_tests(tmp_path):
    uv = uv_binary(tmp_path)
    venv = tmp_path / "floor"
    _run([uv, "venv", "-q", "--python", sys.executable, venv], tmp_path)
    python = venv / "bin" / "python"
    _run(
        [uv, "pip", "install", "-q", "--python", python, "--resolution", "lowest-direct", "-e", f"{ROOT}[test]"],
        tmp_path,
    )

    # The environment holds the floors themselves, not something newer a resolver preferred.
    installed = _installed(python, tmp_path)
    off = {name: (floor, installed.get(name)) for name, floor in _floors().items()}
    off = {name: pair for name, pair in off.items() if pair[1] is None or Version(pair[1]) != Version(pair[0])}
    assert not off, f"not at the floor (declared, installed): {off}"

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "specs" / "quickstart.yaml", work / "quickstart.yaml")
    run = _run([venv / "bin" / "ldpbench", "run", "quickstart.yaml", "--out", "qs"], work)
    assert "320 cells" in run.stderr
    board = json.loads((work / "qs" / "leaderboard.json").read_text())
    assert len(board) == 4 * 3 * 4 and all(row["failed"] == 0 for row in board)

    # The same numbers as this environment's (newer) libraries give, within rounding: the floors
    # change no result (the docs promise equality within rounding across library versions).
    # In this process (as `ldpbench run` does, one worker: the numbers do not depend on the count).
    ldpbench.run(work / "quickstart.yaml", work / "qs-here", workers=1)
    here = {
        (r["oracle"], r["pipeline"], r["epsilon"]): r["mean"]
        for r in json.loads((work / "qs-here" / "leaderboard.json").read_text())
    }
    for row in board:
        expected = here[(row["oracle"], row["pipeline"], row["epsilon"])]
        assert abs(row["mean"] - expected) <= 1e-9 * abs(expected), (row, expected)

    report = _run([venv / "bin" / "ldpbench", "report", "qs", "--html"], work)
    assert "48 leaderboard rows" in report.stderr
    assert (work / "qs" / "report" / "report.md").stat().st_size > 0
    assert (work / "qs" / "report" / "report.html").stat().st_size > 0
    assert list((work / "qs" / "report").glob("*.png"))

    # One pytest process collects every test module (a collection error anywhere exits 2) and runs
    # the slice: a --collect-only run and a second run that collected the slice again cost one more
    # start and a second collection of the slice.
    slice_ = ",".join(f"{folder}/" for folder in UNIT_SLICE)
    args = ["-q", "-n", "0", "-p", "no:cacheprovider", "--basetemp", tmp_path / "inner", "tests"]
    tests = _run([python, "-c", SLICE_RUNNER, slice_, *args], ROOT)
    counts = dict(
        (word.strip(",."), int(n)) for n, word in re.findall(r"(\d+) (passed|failed|deselected|error)", tests.stdout)
    )
    assert counts.get("passed", 0) > 0 and counts.get("deselected", 0) > 0, tests.stdout[-2000:]
    assert "failed" not in counts and "error" not in counts, tests.stdout[-4000:]
