"""Numbers that are wrong only after a cast, and statistics that overflow (issue 28), end to end.

- Cast boundary: an oracle whose report histogram holds a count an int64 cast wraps (uint64
  ``2**64-1`` -> -1, float ``1e19`` or ``2**63`` -> ``-2**63``) passed the negative check, which
  ran before the cast, and the cell was stored as a success (MSE 9.96e31 against 0.0037). Each
  such count must fail its cell, naming the oracle; the largest counts that fit still run.
- Overflow: a post-processor that emits a finite 1e100 in some repeats gives a row whose mean is
  finite and whose standard error is infinite; ``compare`` said ``OK: 1 unchanged``. It must fail
  the gate as the current side (exit 1) and be refused as a baseline (exit 2), never crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ldpbench.cli import main

PLUGIN = '''\
import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import PostProcessor
from ldpbench_plugins.oracles.grr import GRR

VALUES = {
    "uint64-max": np.array([2**64 - 1], dtype=np.uint64),
    "uint64-2**63": np.array([2**63], dtype=np.uint64),
    "float-1e19": np.array([1e19]),
    "float-2**63": np.array([2.0**63]),
    "int64-max": np.array([2**63 - 1], dtype=np.int64),
}


class CastOracle(GRR):
    """GRR whose report histogram's first count is VALUES[value] (the rest as drawn)."""

    name = "cast-oracle"
    params = (Param("value", str, "int64-max", "the count", choices=tuple(VALUES)),)

    def sample_report_histogram(self, true_counts, rng):
        hist = super().sample_report_histogram(true_counts, rng)
        value = VALUES[self.value]
        out = hist.astype(value.dtype)
        out[0] = value[0]
        return out


class Blowup(PostProcessor):
    """Multiplies the estimate by 1e100 in odd repeats (finite, but its square is not)."""

    name = "blowup"
    calls = 0

    def apply(self, estimate, rng):
        Blowup.calls += 1
        return estimate.replace(frequencies=estimate.frequencies * (1e100 if Blowup.calls % 2 else 1.0))


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(CastOracle)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Blowup)
'''

SPEC = """\
name: boundary
seed: 5
repeats: REPEATS
datasets: [{zipf: {d: 8, n: 1000}}]
epsilons: [1]
oracles: [ORACLE]
pipelines: [PIPE]
metrics: [mse]
"""

WRAPPING = ("uint64-max", "uint64-2**63", "float-1e19", "float-2**63")


def _run(folder: Path, oracle: str, pipe: str, repeats: int, capsys) -> tuple[int, list[dict], str]:
    (folder / "pl").mkdir(exist_ok=True)
    (folder / "pl" / "boundary.py").write_text(PLUGIN)
    spec = SPEC.replace("ORACLE", oracle).replace("PIPE", pipe).replace("REPEATS", str(repeats))
    (folder / "spec.yaml").write_text(spec)
    capsys.readouterr()
    code = main(
        ["run", str(folder / "spec.yaml"), "--out", str(folder / "out"), "--plugins-dir", str(folder / "pl")]
        + ["--workers", "1", "--no-progress"]
    )
    err = capsys.readouterr().err
    rows = [json.loads(line) for line in (folder / "out" / "results.jsonl").read_text().splitlines()[1:]]
    return code, rows, err


@pytest.mark.parametrize("value", WRAPPING)
def test_a_count_an_int64_cast_would_wrap_fails_its_cell(value, tmp_path, capsys):
    code, rows, err = _run(tmp_path, f"{{cast-oracle: {{value: '{value}'}}}}", "base", 2, capsys)
    assert code == 3 and "Traceback" not in err
    assert rows and all(r["error"] and "beyond int64" in r["error"] and "cast-oracle" in r["error"] for r in rows)


def test_the_largest_count_that_fits_still_runs(tmp_path, capsys):
    code, rows, _ = _run(tmp_path, "{cast-oracle: {value: int64-max}}", "base", 2, capsys)
    assert code == 0 and all(r["error"] is None for r in rows)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A sane run and one whose repeats overflow when squared (same spec otherwise)."""
    tmp = tmp_path_factory.mktemp("overflow")
    capsys = _Quiet()
    sane, blown = tmp / "sane", tmp / "blown"
    sane.mkdir()
    blown.mkdir()
    assert _run(sane, "grr", "base", 6, capsys)[0] == 0
    code, rows, _ = _run(blown, "grr", "blowup", 6, capsys)
    assert code == 0  # finite numbers: the run itself is right to store them
    # The pipelines' labels differ: make the blown run's rows the sane run's (same row keys).
    lines = (blown / "out" / "leaderboard.json").read_text().replace('"blowup"', '"base"')
    (blown / "lb.json").write_text(lines)
    (sane / "lb.json").write_text((sane / "out" / "leaderboard.json").read_text())
    return sane / "lb.json", blown / "lb.json"


class _Quiet:
    def readouterr(self):
        class _R:
            err = ""

        return _R()


@pytest.mark.parametrize("fmt", ["markdown", "json", "table"])
def test_an_overflowing_current_row_fails_the_gate(folders, capsys, fmt):
    sane, blown = folders
    row = json.loads(blown.read_text())[0]
    assert row["stderr"] == float("inf") or row["stderr"] > 1e300 or row["stderr"] is None
    capsys.readouterr()
    code = main(["compare", str(sane), str(blown), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "Traceback" not in err


def test_an_overflowing_baseline_is_refused(folders, capsys):
    sane, blown = folders
    capsys.readouterr()
    code = main(["compare", str(blown), str(sane)])
    _, err = capsys.readouterr()
    assert code == 2 and "standard error of inf" in err and "Traceback" not in err


def test_case_counts():
    assert len(WRAPPING) + 1 + 3 + 1 == 9
