"""n = 100,000,000 GRR users on the per-user path in well under 1 GB (issue 7, scale-out).

The per-user path perturbs users chunk by chunk (:data:`ldpbench.engine.simulate.DEFAULT_CHUNK_USERS`),
so memory does not grow with n. Unchunked, the users' items alone would take 800 MB (int64) and
their random draws as much again, so this test fails if chunking breaks. It runs the real
``ldpbench run`` in a subprocess and reads that child's own peak resident set size from
``os.wait4`` (the rusage of exactly that process, not of every child pytest ever started).

It also checks the number is right: every chunk must reach the aggregator, so the MSE must be
near GRR's variance for n = 1e8 ([W17] Var = q(1-q)/(n(p-q)^2) + f(1-p-q)/(n(p-q))); a run that
dropped chunks would be off by orders of magnitude.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time

N = 100_000_000
D = 16
EPSILON = 1.0
#: The issue's bound on peak memory.
LIMIT_MB = 1024

SPEC = f"""\
name: hundred-million
seed: 5
repeats: 1
simulation: per-user
datasets:
  - uniform: {{d: {D}, n: {N}}}
epsilons: [{EPSILON}]
oracles: [grr]
pipelines: [base]
metrics: [mse]
executor: in-process
"""


def grr_mse(n: int, d: int, eps: float) -> float:
    """Expected mean-over-items squared error of GRR on a uniform population."""
    p = math.exp(eps) / (math.exp(eps) + d - 1)
    q = 1 / (math.exp(eps) + d - 1)
    f = 1 / d
    return q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q))


def test_hundred_million_grr_users_per_user_under_1gb(tmp_path):
    (tmp_path / "big.yaml").write_text(textwrap.dedent(SPEC))
    out, err = tmp_path / "stdout.json", tmp_path / "stderr.txt"
    started = time.perf_counter()
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ldpbench", "run", "big.yaml", "--out", "res", "--format", "json", "--no-progress"],
            cwd=tmp_path,
            stdout=fo,
            stderr=fe,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen consistent
    seconds = time.perf_counter() - started
    peak_mb = usage.ru_maxrss / 1024  # Linux reports KiB
    print(f"n={N:,} per-user GRR: peak RSS {peak_mb:.0f} MB, {seconds:.1f} s wall")

    assert proc.returncode == 0, err.read_text()
    assert peak_mb < LIMIT_MB, f"peak RSS {peak_mb:.0f} MB >= {LIMIT_MB} MB"

    (row,) = json.loads(out.read_text())
    assert row["n"] == N and row["repeats"] == 1 and row["failed"] == 0
    stored = [json.loads(line) for line in (tmp_path / "res" / "results.jsonl").read_text().splitlines()[1:]]
    assert [r["simulation"] for r in stored] == ["per-user"]
    expected = grr_mse(N, D, EPSILON)
    # One repeat of a mean of 16 squared errors: within [0.1, 4] x theory with overwhelming
    # probability; dropping even one of the ~100 chunks shifts it far more.
    assert 0.1 * expected < row["mean"] < 4 * expected, (row["mean"], expected)
