"""ResultsStore under a real SIGKILL: a killed appender loses at most the cell being written."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
import warnings

from support import done_cells

from ldpbench.results.store import ResultsStore, ResultsWarning


def test_sigkill_during_appends_loses_at_most_the_cell_being_written(tmp_path):
    """A real SIGKILL of a process appending cells: every complete line survives intact."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from ldpbench.results.store import ResultsStore
        store = ResultsStore({str(tmp_path)!r})
        i = 0
        while True:
            store.append([dict(cell_id=f"c{{i}}", dataset="x" * 2000, users="", epsilon=1.0,
                               oracle="grr", pipeline=f"p{{j}}", metric="mse",
                               greater_is_better=False, repeat=0, value=float(i), error=None,
                               simulation="aggregate", n=1, d=1, fingerprint="f", elapsed=0.0)
                          for j in range(20)])
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    store = ResultsStore(tmp_path)
    deadline = time.monotonic() + 30
    while (not store.exists() or store.path.stat().st_size < 400_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResultsWarning)  # a torn last line is allowed, not required
        df = store.load()
    assert store.skipped_lines <= 1
    per_cell = df.group_by("cell_id").len()
    assert len(per_cell) > 5
    # every cell but possibly the last one has all 20 rows
    assert (per_cell["len"] < 20).sum() <= 1
    done = done_cells(store, [(f"p{j}", "mse") for j in range(20)], fingerprint="f")
    assert len(done) >= len(per_cell) - 1
