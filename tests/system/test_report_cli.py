"""``ldpbench report RESULTS --out DIR``: Markdown with leaderboard tables and metric-vs-epsilon PNGs."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import cli

from ldpbench.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


SPEC = """\
name: report-demo
seed: 8
repeats: 3
datasets:
  - zipf: {d: 16, n: 3000, s: 1.2}
  - uniform: {d: 16, n: 3000}
epsilons: [0.5, 2, 8]
oracles: [grr, oue]
pipelines: [base, norm-sub]
metrics: [mse, l1]
"""


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; asserts the file is a well-formed PNG start."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    assert data[-8:-4] == b"IEND"  # written to the end
    return struct.unpack(">II", data[16:24])


def run_spec_text(root: Path, name: str, text: str) -> Path:
    (root / f"{name}.yaml").write_text(text)
    code = main(
        [
            "run",
            str(root / f"{name}.yaml"),
            "--out",
            str(root / name),
            "--workers",
            "1",
            "--no-progress",
            "--format",
            "json",
        ]
    )
    assert code == 0
    return root / name


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two results folders: the two-dataset spec, and a one-dataset, one-metric version of it."""
    root = tmp_path_factory.mktemp("report")
    run_spec_text(root, "two", textwrap.dedent(SPEC))
    one = textwrap.dedent(SPEC).replace("  - uniform: {d: 16, n: 3000}\n", "").replace("[mse, l1]", "[mse]")
    run_spec_text(root, "one", one.replace("report-demo", "one"))
    return root


@pytest.fixture(scope="module")
def two_report(results):
    """``ldpbench report two --out two-report`` (exit code, stderr, out dir)."""
    out = results / "two-report"
    code = main(["report", str(results / "two"), "--out", str(out)])
    return code, out


def test_report_writes_markdown_and_one_png_per_metric(two_report):
    code, out = two_report
    assert code == 0
    md = (out / "report.md").read_text()
    pngs = sorted(out.glob("fig-*.png"))  # cd-*.png: the rank section (tests/system/test_report_statistics.py)
    assert [p.name for p in pngs] == ["fig-l1.png", "fig-mse.png"]
    for png in pngs:
        width, height = png_size(png)
        assert width > 300 and height > 200
    # The markdown embeds every figure by its relative name, under a heading per metric.
    assert re.findall(r"!\[[^\]]*\]\((fig-[^)]+)\)", md) == ["fig-mse.png", "fig-l1.png"]
    assert "## mse" in md and "## l1" in md
    # The leaderboard tables: one per (dataset, metric), one column per epsilon, best in bold.
    assert md.count("#### zipf(d=16,n=3000,s=1.2) · mse (lower is better)") == 1
    assert md.count("#### uniform(d=16,n=3000) · l1 (lower is better)") == 1
    header = next(line for line in md.splitlines() if line.startswith("| oracle"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["oracle", "pipeline", "ε=0.5", "ε=2", "ε=8"]
    rows = [line for line in md.splitlines() if line.startswith("| grr") or line.startswith("| oue")]
    assert len(rows) == 2 * 2 * 2 * 2  # (dataset, metric) tables x (oracle, pipeline) rows
    assert sum(line.count("**") // 2 for line in rows) >= 2 * 2 * 3  # a bold best per column
    assert "seed 8" in md and "Failures" not in md


def test_one_row_of_panels_per_dataset_and_default_out(results, two_report, capsys):
    # Without --out the report goes to RESULTS/report.
    code, _, err = cli(capsys, "report", results / "one")
    assert code == 0, err
    assert "1 figures" in err
    one = results / "one" / "report"
    assert (one / "report.md").is_file() and [p.name for p in one.glob("fig-*.png")] == ["fig-mse.png"]
    # Panels are dataset x oracle, one row per dataset: one dataset instead of two is one row of
    # panels less, as wide.
    one_w, one_h = png_size(one / "fig-mse.png")
    two_w, two_h = png_size(two_report[1] / "fig-mse.png")
    assert two_w == one_w and two_h > one_h * 1.4


def test_a_leaderboard_json_also_makes_a_report(results, capsys):
    code, _, err = cli(capsys, "report", results / "one" / "leaderboard.json", "--out", results / "from-json")
    assert code == 0, err
    assert [p.name for p in (results / "from-json").glob("fig-*.png")] == ["fig-mse.png"]
    assert "fig-mse.png" in (results / "from-json" / "report.md").read_text()


def test_the_real_command_exit_2_no_traceback(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "ldpbench", "report", str(tmp_path / "missing"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert res.stderr.startswith("ldpbench: error: ") and "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()


FRAGILE = '''\
from ldpbench import hookimpl
from ldpbench.types import PostProcessor


class Fragile(PostProcessor):
    """Raises at epsilon 8 with a message a Markdown table must escape."""

    name = "fragile-report"

    def apply(self, estimate, rng):
        if estimate.epsilon == 8:
            raise ValueError("bad | budget\\nsecond line")
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Fragile)
'''


def test_the_failures_section_lists_every_failed_row(tmp_path, capsys):
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "fragile_report.py").write_text(FRAGILE)
    spec = textwrap.dedent(SPEC).replace("[base, norm-sub]", "[base, fragile-report]").replace("report-demo", "failing")
    spec = spec.replace("  - uniform: {d: 16, n: 3000}\n", "")
    (tmp_path / "failing.yaml").write_text(spec)
    code = main(
        [
            "run",
            str(tmp_path / "failing.yaml"),
            "--out",
            str(tmp_path / "failing"),
            "--workers",
            "1",
            "--no-progress",
            "--plugins-dir",
            str(tmp_path / "plugs"),
        ]
    )
    assert code == 3
    code, _, err = cli(capsys, "report", tmp_path / "failing", "--out", tmp_path / "report")
    assert code == 0, err
    md = (tmp_path / "report" / "report.md").read_text()
    section = md.split("## Failures\n", 1)[1].strip().splitlines()
    assert section[0].startswith("Rows whose plugin failed (the error, and where in plugin code it was raised")
    assert section[2] == "| dataset | ε | oracle | pipeline | metric | failed repeats | error | where |"
    error = "pipeline 'fragile-report': ValueError: bad \\| budget second line"  # escaped, one line
    # The location: the plugin's file and line, innermost frame first (issue 10).
    where = f"`{tmp_path / 'plugs' / 'fragile_report.py'}:{FRAGILE.splitlines().index(next(line for line in FRAGILE.splitlines() if 'raise ValueError' in line)) + 1} in apply`"
    assert section[4:] == [
        f"| zipf(d=16,n=3000,s=1.2) | 8 | {oracle} | fragile-report | {metric} | 3 | {error} | {where} |"
        for oracle in ("grr", "oue")
        for metric in ("mse", "l1")
    ]
    # After every metric's section, at the end of the report.
    assert md.index("## Failures") > md.index("## l1")
