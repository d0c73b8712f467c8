"""A run killed with SIGKILL mid-way resumes and ends with the uninterrupted run's leaderboard.

The real ``ldpbench run`` runs in a subprocess on the per-user path (each cell perturbs millions of
users, a few tenths of a second), so the test can watch ``results.jsonl`` grow and kill the process
while some but not all cells are stored. SIGKILL gives the process no chance to clean up: what
survives is exactly what the store had fsync'd. Then:

- the store is intact: every line but possibly a torn last one is a whole row, and every stored
  cell but the one being written at the kill has all of its rows (a cell is one write);
- rerunning the same command resumes: it runs only the missing cells;
- the final leaderboard JSON equals that of an uninterrupted run into another folder.

It runs in-process (``--workers 1``: the killed process is the only one doing work) and on the
process pool (``--workers 2``), where the killed parent's workers must die with it rather than
keep computing cells nobody will store (Linux: they ask for SIGKILL when their parent dies).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ldpbench.engine.rows import COLUMNS
from ldpbench.results.store import RESULTS_FILE, ResultsStore

SPEC = """\
name: killme
seed: 77
repeats: 8
simulation: per-user
datasets:
  - uniform: {d: 16, n: 2000000}
epsilons: [1, 3]
oracles: [grr]
pipelines: [base, norm-sub]
metrics: [mse, l1]
"""
CELLS = 2 * 8
ROWS_PER_CELL = 2 * 2
#: Give up waiting for the first cells after this long (the machine is shared).
WAIT_SECONDS = 60
#: Orphaned pool workers must be gone this soon after their parent is SIGKILLed.
ORPHAN_SECONDS = 5


def _command(spec: Path, out: Path, workers: int = 1) -> list[str]:
    # --workers 1: the in-process executor; 2: the process pool.
    return [
        sys.executable,
        "-m",
        "ldpbench",
        "run",
        str(spec),
        "--out",
        str(out),
        "--format",
        "json",
        "--workers",
        str(workers),
        "--no-progress",
    ]


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a live process from /proc, None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": the comm may hold spaces
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat and stat[1] == pid and stat[0] != "Z":
                out.append(int(entry.name))
    return out


def _alive(pids: list[int]) -> list[int]:
    # A zombie ("Z") has exited: it only waits for a reaper that a container may not run.
    return [p for p in pids if (stat := _proc_stat(p)) is not None and stat[0] != "Z"]


def _stored_cells(path: Path) -> dict[str, int]:
    """cell_id -> number of complete rows, reading the raw file as a reader racing the writer would."""
    cells: dict[str, int] = {}
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return cells
    for line in data.split(b"\n")[1:-1]:  # header first; the last piece may be a line in progress
        row = json.loads(line)
        cells[row["cell_id"]] = cells.get(row["cell_id"], 0) + 1
    return cells


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "pool"])
def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_leaderboard(tmp_path, workers):
    spec = tmp_path / "killme.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"
    results = killed_dir / RESULTS_FILE

    proc = subprocess.Popen(_command(spec, killed_dir, workers), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_SECONDS
    orphans: list[int] = []
    try:
        while True:
            seen = _stored_cells(results)
            if sum(rows == ROWS_PER_CELL for rows in seen.values()) >= 3:
                break
            assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()!r}"
            assert time.monotonic() < deadline, "no cell was stored in time"
            time.sleep(0.01)
        orphans = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if workers > 1:
            assert len(orphans) >= workers, f"expected {workers} pool workers, found {orphans}"
            gone_by = time.monotonic() + ORPHAN_SECONDS
            while _alive(orphans) and time.monotonic() < gone_by:
                time.sleep(0.05)
            assert not _alive(orphans), f"pool workers outlived their SIGKILLed parent: {_alive(orphans)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        for pid in _alive(orphans):  # never leave a stray worker computing on a shared machine
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL

    # The store survived intact: header, whole rows, whole cells (at most one torn last line).
    data = results.read_bytes()
    lines = data.split(b"\n")
    header = json.loads(lines[0])
    assert header["schema_version"] >= 1 and header["kind"] == "ldpbench-results"
    whole = lines[1:-1]  # lines[-1]: b"" or the torn end of a write cut by the kill (skipped on load)
    for line in whole:
        row = json.loads(line)
        assert set(COLUMNS) <= row.keys() and row["error"] is None
    stored = _stored_cells(results)  # in file order
    # A cell is one write, so every cell is whole, except that the kernel may cut the one write
    # in progress when SIGKILL lands inside it: only the last cell may be short (it is redone).
    *earlier, last = stored.values()
    assert set(earlier) == {ROWS_PER_CELL} and 0 < last <= ROWS_PER_CELL, stored
    done = [cell for cell, rows in stored.items() if rows == ROWS_PER_CELL]
    assert 3 <= len(done) < CELLS, f"killed too late: {len(done)} of {CELLS} cells stored"
    print(f"SIGKILL after {len(done)} of {CELLS} cells ({len(stored) - len(done)} cut mid-write)")
    loaded = ResultsStore(killed_dir).load()
    assert loaded.height == sum(stored.values())

    # Resume: only the missing cells run.
    resumed = subprocess.run(_command(spec, killed_dir, workers), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{CELLS - len(done)} run, {len(done)} already done" in resumed.stderr
    assert "Traceback" not in resumed.stderr

    clean = subprocess.run(_command(spec, clean_dir), capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert f"{CELLS} run, 0 already done" in clean.stderr

    board = json.loads(resumed.stdout)
    assert board == json.loads(clean.stdout)
    assert len(board) == 2 * 2 * 2 and all(r["repeats"] == 8 and r["failed"] == 0 for r in board)
    # The leaderboard.json files written next to the results agree too.
    assert json.loads((killed_dir / "leaderboard.json").read_text()) == board
    assert json.loads((clean_dir / "leaderboard.json").read_text()) == board
    # And so does every stored value, row by row (not only the means).
    ordered = ["cell_id", "oracle", "pipeline", "metric"]
    a = ResultsStore(killed_dir).load().drop("elapsed").sort(ordered)
    b = ResultsStore(clean_dir).load().drop("elapsed").sort(ordered)
    assert a.equals(b)
