"""The user's Ctrl-C still stops a run; a plugin's own KeyboardInterrupt or a hang does not (issue 10).

- A plugin raising ``KeyboardInterrupt`` used to stop the run with exit 130 and no leaderboard
  (see test_fuzz_plugin_faults.py for that case: now a failed cell). A *real* SIGINT, delivered
  to the process while a plugin runs, must still stop the run cleanly: exit 130, the cells
  finished before it kept, and a rerun resumes.
- A plugin that hangs where the in-process timer cannot reach it (it ignores SIGALRM) is killed
  by the process pool past the cell's hard limit; its cell fails, the run completes, exit 3.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

PLUGIN = '''\
"""A post-processor that waits, in its third call, until the test interrupts the run."""

import os
import signal
import time
from pathlib import Path

from ldpbench import hookimpl
from ldpbench.types import PostProcessor

CALLS = []


class Waiter(PostProcessor):
    """Identity; on its third call it says so in a file and sleeps (the test sends SIGINT)."""

    name = "waiter"

    def apply(self, estimate, rng):
        CALLS.append(1)
        if len(CALLS) == 3:
            Path(os.environ["MARKER"]).write_text("waiting")
            time.sleep(120)
        return estimate


class Stubborn(PostProcessor):
    """Ignores the cell timer's SIGALRM and sleeps: only a kill stops it."""

    name = "stubborn"

    def apply(self, estimate, rng):
        if estimate.epsilon == 4:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(120)
        return estimate


class SelfInterrupt(PostProcessor):
    """Sends SIGINT to its own process at epsilon 4 (a stray signal, or a plugin's os.kill)."""

    name = "self-interrupt"

    def apply(self, estimate, rng):
        if estimate.epsilon == 4:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Waiter)
    registry.register(Stubborn)
    registry.register(SelfInterrupt)
'''

SPEC = """\
name: interrupted
seed: 3
repeats: 4
datasets:
  - zipf: {d: 16, n: 2000, s: 1.2}
epsilons: [1]
oracles: [grr]
pipelines: [PIPE]
metrics: [mse]
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "waiter.py").write_text(PLUGIN)
    return tmp_path


def test_a_real_ctrl_c_stops_the_run_cleanly_and_keeps_finished_cells(folder):
    (folder / "spec.yaml").write_text(textwrap.dedent(SPEC).replace("PIPE", "waiter"))
    marker = folder / "marker"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ldpbench",
            "run",
            "spec.yaml",
            "--out",
            "out",
            "--workers",
            "1",
            "--plugins-dir",
            "plugs",
            "--no-progress",
        ],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MARKER": str(marker)},
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # the plugin is now inside its third cell
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted (finished cells are saved" in err and "Traceback" not in err
    lines = (folder / "out" / "results.jsonl").read_text().splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)  # the two cells before it
    # A rerun resumes: the two finished cells are not run again.
    rerun = subprocess.run(
        [
            sys.executable,
            "-m",
            "ldpbench",
            "run",
            "spec.yaml",
            "--out",
            "out",
            "--workers",
            "1",
            "--plugins-dir",
            "plugs",
            "--no-progress",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MARKER": str(folder / "m2")},
    )
    assert "(2 run, 2 already done)" in rerun.stderr


def test_the_process_pool_kills_a_plugin_the_timer_cannot_stop(folder):
    """``Stubborn`` ignores SIGALRM: the pool kills its worker after the hard limit (1 + 2.25 s),
    reruns the cells in flight one process each, and kills it again there."""
    spec = textwrap.dedent(SPEC).replace("PIPE", "stubborn").replace("epsilons: [1]", "epsilons: [1, 4]")
    spec = spec.replace("repeats: 4", "repeats: 2")
    (folder / "spec.yaml").write_text(spec)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ldpbench",
            "run",
            "spec.yaml",
            "--out",
            "out",
            "--workers",
            "2",
            "--plugins-dir",
            "plugs",
            "--no-progress",
            "--cell-timeout",
            "1",
            "--format",
            "json",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stderr
    lines = (folder / "out" / "results.jsonl").read_text().splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    assert {r["epsilon"] for r in rows if r["error"]} == {4.0}
    assert all(
        "cell timed out after 1 s (cell_timeout); its worker process did not stop and was killed" == r["error"]
        for r in rows
        if r["error"]
    )
    assert sum(1 for r in rows if r["error"] is None) == 2  # the epsilon-1 cells
    assert json.loads(proc.stdout)  # the leaderboard was written


def test_a_sigint_inside_one_pool_worker_fails_its_cells_not_the_run(folder):
    """Reproduction (issue 28): a SIGINT delivered inside one pool worker (a plugin that signals
    its own process) stopped the whole run with exit 130; it fails that worker's cells, like any
    other fault, and the run completes."""
    spec = textwrap.dedent(SPEC).replace("PIPE", "self-interrupt").replace("epsilons: [1]", "epsilons: [1, 4]")
    (folder / "spec.yaml").write_text(spec)
    proc = subprocess.run(
        [sys.executable, "-m", "ldpbench", "run", "spec.yaml", "--out", "out", "--plugins-dir", "plugs"]
        + ["--no-progress", "--executor", "process-pool", "--workers", "2", "--format", "json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = [json.loads(line) for line in (folder / "out" / "results.jsonl").read_text().splitlines()[1:]]
    failed = [r for r in rows if r["error"]]
    assert len(rows) == 8 and len(failed) == 4
    assert all(r["epsilon"] == 4 and "KeyboardInterrupt" in r["error"] for r in failed)


def test_a_real_ctrl_c_still_stops_a_run_on_the_pool(folder):
    """A terminal's Ctrl-C reaches the whole process group: the run's own process stops (130)."""
    (folder / "spec.yaml").write_text(textwrap.dedent(SPEC).replace("PIPE", "waiter"))
    marker = folder / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ldpbench", "run", "spec.yaml", "--out", "out", "--plugins-dir", "plugs"]
        + ["--no-progress", "--executor", "process-pool", "--workers", "1"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MARKER": str(marker)},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted (finished cells are saved" in err
