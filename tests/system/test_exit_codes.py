"""Exit codes of ldpbench's own failures: a bug is exit 4 (never 1, which means "regression")."""

from __future__ import annotations

import subprocess
import sys


def test_a_closed_pipe_is_not_an_error():
    # `ldpbench plugins --json | head -0`: the reader is gone before anything is written.
    proc = subprocess.Popen(
        [sys.executable, "-m", "ldpbench", "plugins", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
