"""``cell_timeout:`` in a spec and ``--cell-timeout`` (issue 10): a plugin that sleeps or loops
forever used to hang the run with no way out but a kill. Now its cell fails and the run completes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ldpbench.cli import main

FIXTURES = Path(__file__).parent / "fixtures"

SPEC = """\
name: slow
seed: 2
repeats: 1
datasets:
  - zipf: {d: 16, n: 3000, s: 1.1}
epsilons: [1, 3]
oracles: [grr]
pipelines: [base, {faulty-pp: {fault: sleep}}]
metrics: [mse]
"""


def _run(tmp_path, spec, *flags):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(spec))
    return main(
        [
            "run",
            str(tmp_path / "spec.yaml"),
            "--out",
            str(tmp_path / "out"),
            "--plugins-dir",
            str(FIXTURES),
            "--workers",
            "1",
            "--no-progress",
            *flags,
        ]
    )


def test_the_spec_s_cell_timeout_fails_the_hung_cell_and_the_run_completes(tmp_path, capsys):
    code = _run(tmp_path, SPEC + "cell_timeout: 1\n")
    assert code == 3
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()[1:]]
    failed = [(r["epsilon"], r["pipeline"]) for r in rows if r["error"]]
    assert failed == [(3.0, "faulty-pp(fault=sleep)")]  # it hangs at epsilon 3 only
    assert "cell timed out after 1 s (cell_timeout)" in capsys.readouterr().err


def test_the_flag_beats_the_spec(tmp_path, capsys):
    code = _run(tmp_path, SPEC + "cell_timeout: 100000\n", "--cell-timeout", "0.5")
    assert code == 3
    assert "cell timed out after 0.5 s" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "yes", "1e400", "[1]", "700000"])
def test_a_bad_cell_timeout_is_a_spec_error_with_its_line(tmp_path, capsys, value):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC) + f"cell_timeout: {value}\n")
    code = main(["validate", str(tmp_path / "spec.yaml"), "--plugins-dir", str(FIXTURES)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"spec.yaml:{len(SPEC.splitlines()) + 1}: 'cell_timeout' must be" in err


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf"])
def test_a_bad_flag_is_a_usage_error(tmp_path, capsys, value):
    code = _run(tmp_path, SPEC, f"--cell-timeout={value}")
    err = capsys.readouterr().err
    assert code == 2 and "--cell-timeout must be" in err and "Traceback" not in err
