"""ldpbench as a user gets it from a wheel: built, installed (not editable) into a fresh virtual
environment, and the quick start run from another folder.

An editable install reads the source tree, so it hides a package missing from ``pyproject.toml``
or a data file left out of the wheel; only a real wheel shows them.

The environment is made and filled by uv (the test extra brings it): ``uv venv`` and ``uv pip
install`` link the dependencies from uv's cache in about 2 s, where ``python -m venv`` (ensurepip)
and pip unpacking SciPy, polars and matplotlib took about 12 s of CPU. What is checked is the
wheel, not the installer: pip's own path, word for word as a README gives it, is exercised by
tests/system/test_new_plugin.py (a generated plugin's install lines in a fresh environment).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from support import source_packages, uv_binary

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def test_the_quick_start_runs_from_an_installed_wheel(tmp_path):
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)], tmp_path)
    (wheel,) = wheels.glob("ldpbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in source_packages():
        assert package.replace(".", "/") + "/__init__.py" in names, f"{package} is not in the wheel"
    shipped = {p.name for p in (ROOT / "datasets").iterdir() if p.suffix in (".gz", ".csv", ".md")}
    assert {n.split("/", 1)[1] for n in names if n.startswith("ldpbench_data/")} >= shipped

    venv = tmp_path / "venv"
    uv = str(uv_binary(tmp_path))
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], tmp_path)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    # Not editable, dependencies resolved as a user's install resolves them; uv compiles no bytecode.
    _run([uv, "pip", "install", "-q", "--python", str(bindir / "python"), str(wheel)], tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(ROOT / "specs" / "quickstart.yaml", elsewhere / "quickstart.yaml")
    where = _run([str(bindir / "python"), "-c", "import ldpbench, ldpbench_data; print(ldpbench.__file__)"], elsewhere)
    assert Path(where.stdout.strip()).is_relative_to(venv), f"ldpbench imported from {where.stdout}"

    run = _run([str(bindir / "ldpbench"), "run", "quickstart.yaml"], elsewhere)
    assert "power-ns" in run.stdout and "320 cells" in run.stderr
    board = json.loads((elsewhere / "results" / "quickstart" / "leaderboard.json").read_text())
    assert len(board) == 4 * 3 * 4 and all(row["failed"] == 0 for row in board)

    # The shipped histograms came with the wheel (package data), not from the source tree.
    datasets = json.loads(_run([str(bindir / "ldpbench"), "datasets", "--json"], elsewhere).stdout)
    by_name = {d["name"]: d for d in datasets}
    assert by_name["retail"]["n"] == 908_577 and by_name["adult"]["d"] == 224
