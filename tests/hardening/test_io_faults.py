"""Disk full and other I/O faults end a run with one line and exit 5; two runs never interleave.

Reproductions on the code before the fix (each was a traceback and exit 4, "a bug in ldpbench"):
a full disk during an append (ENOSPC), ``--out`` naming a file or a device, a read-only results
folder, a ``results.jsonl`` that is a directory. Two ``ldpbench run`` processes into one folder
appended the same cells twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ldpbench.engine.rows import ROW_KEY
from ldpbench.errors import ExitCode
from ldpbench.results.store import ResultsStore

SPEC = """\
name: io
seed: 5
repeats: 4
datasets:
  - zipf: {d: 16, n: 2000, s: 1.3}
epsilons: [1, 2]
oracles: [grr, oue]
pipelines: [base, norm-sub]
metrics: [mse, l1]
"""
CELLS = 2 * 2 * 4
ROWS = CELLS * 2 * 2

#: Runs `ldpbench` with os.write / os.open failing on files of the results folder as told.
HARNESS = textwrap.dedent("""\
    import errno, os, sys
    mode, limit = sys.argv[1], int(sys.argv[2])
    real_write, real_open = os.write, os.open
    calls = [0]

    def results_fd(fd):
        try:
            return os.readlink(f"/proc/self/fd/{fd}").endswith("results.jsonl")
        except OSError:
            return False

    def write(fd, data):
        if mode == "enospc" and results_fd(fd):
            calls[0] += 1
            if calls[0] == limit + 1:  # half a cell reaches the disk, then it is full
                return real_write(fd, bytes(data)[: len(data) // 2])
            if calls[0] > limit + 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    def open_(path, flags, *args, **kwargs):
        if mode == "erofs" and "out" in str(path) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    os.write, os.open = write, open_
    from ldpbench.cli import main
    sys.exit(main(sys.argv[3:]))
""")


def ldpbench(cwd, *args, harness=None, timeout=300):
    prefix = [sys.executable, "-c", HARNESS, *harness] if harness else [sys.executable, "-m", "ldpbench"]
    return subprocess.run([*prefix, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


RUN = ("run", "spec.yaml", "--out", "out", "--workers", "1", "--no-progress", "--format", "json")


def io_error(res, *fragments):
    assert res.returncode == ExitCode.IO == 5, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ldpbench: error: cannot "), res.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_a_full_disk_keeps_what_was_written_and_the_run_resumes(project):
    res = ldpbench(project, *RUN, harness=("enospc", "3"))
    line = io_error(res, "results.jsonl: No space left on device (ENOSPC)", "run again to resume")
    assert "results already written are kept" in line
    # The half-written cell was cut off: the file holds three whole cells and no torn line.
    store = ResultsStore(project / "out")
    rows = store.load()
    assert store.skipped_lines == 0
    assert rows["cell_id"].n_unique() == 3 and len(rows) == 3 * 4
    assert (project / "out" / "results.jsonl").read_bytes().endswith(b"\n")
    # Space freed: the next run does the rest.
    res = ldpbench(project, *RUN)
    assert res.returncode == 0, res.stderr
    assert f"{CELLS} cells ({CELLS - 3} run, 3 already done)" in res.stderr
    assert len(ResultsStore(project / "out").load()) == ROWS


def test_a_read_only_results_folder_exits_5(project):
    io_error(ldpbench(project, *RUN, harness=("erofs", "0")), "Read-only file system (EROFS)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_folder_without_write_permission_exits_5(project):
    (project / "out").mkdir()
    (project / "out").chmod(0o555)
    try:
        io_error(ldpbench(project, *RUN), "Permission denied")
    finally:
        (project / "out").chmod(0o755)


@pytest.mark.parametrize("out", ["a-file", "/dev/null"])
def test_an_out_that_is_a_file_or_a_device_exits_5(project, out):
    (project / "a-file").write_text("not a folder\n")
    res = ldpbench(project, *RUN[:3], out, *RUN[4:])
    io_error(res, f"{out}: File exists (EEXIST)")
    assert (project / "a-file").read_text() == "not a folder\n"


def test_a_results_file_that_is_a_directory_exits_5(project):
    (project / "out" / "results.jsonl").mkdir(parents=True)
    io_error(ldpbench(project, *RUN), "results.jsonl: Is a directory (EISDIR)")


# ----------------------------------------------------------------------------------------------
# Two runs, one folder
# ----------------------------------------------------------------------------------------------

HOLD = textwrap.dedent("""\
    import sys
    from ldpbench.results.store import ResultsStore
    with ResultsStore(sys.argv[1]).lock():
        print("locked", flush=True)
        sys.stdin.readline()
""")


def test_a_second_run_into_a_held_folder_is_refused_and_writes_nothing(project):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(project / "out")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = ldpbench(project, *RUN)
        assert res.returncode == 2, res.stderr
        # The folder is named as the run resolved it, once and absolutely (a plugin's chdir cannot move it).
        assert res.stderr == (
            f"ldpbench: error: {(project / 'out').resolve()}: another ldpbench run is writing to this results folder; "
            "wait for it to finish (then run again: finished cells are kept) or choose another --out\n"
        )
        assert list((project / "out").iterdir()) == []
    finally:
        holder.communicate("\n", timeout=60)
    # Released (also when a run dies: the kernel drops the lock), the folder is usable again.
    assert ldpbench(project, *RUN).returncode == 0


def test_two_concurrent_runs_never_duplicate_or_lose_rows(project):
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ldpbench", *RUN],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    codes = sorted(code for code, _ in results)
    # Either they ran one after the other, or the second was refused; never both at once.
    assert codes in ([0, 0], [0, 2]), results
    if codes == [0, 2]:
        assert "another ldpbench run is writing to this results folder" in max(results)[1]
    lines = (project / "out" / "results.jsonl").read_text().splitlines()[1:]
    keys = [tuple(json.loads(line)[k] for k in ROW_KEY) for line in lines]
    assert len(keys) == len(set(keys)) == ROWS
