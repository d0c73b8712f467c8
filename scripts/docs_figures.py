#!/usr/bin/env python3
"""Measure the speed figures quoted in the README and docs/, and rewrite them in place.

A figure in a Markdown file is marked ``<!-- fig:KEY -->3.2 s<!-- /fig -->``; this script
measures KEY (:data:`FIGURES`) and replaces the text between the markers. Nothing else of the
file changes. Figures are medians: wall times of whole commands (startup included) over
``--repeats`` runs, and pytest-benchmark medians for the per-estimate figures.

    scripts/docs_figures.py                      # measure everything, rewrite the files
    scripts/docs_figures.py --only quickstart-wall ci-wall --repeats 5
    scripts/docs_figures.py --dry-run            # measure and print, change nothing
    scripts/docs_figures.py --check              # every marker names a known figure (no measuring)
    scripts/docs_figures.py --only peer-oracles --peers-python /tmp/peers-venv/bin/python

A whole table is marked by a block: a line ``<!-- table:KEY -->``, the table, a line
``<!-- /table -->``; KEY is one of :data:`TABLES`, whose rows are measured in one run of one
script (``scripts/compare_pure_ldp.py``: ldpbench beside pure-LDP and multi-freq-ldpy). The peers
are not ldpbench dependencies: the tables are measured only with ``--peers-python`` (or
``LDPBENCH_PEERS_PYTHON``), the interpreter of an environment that has them (the script's
docstring says how to make one); without it, or when the peers are missing there, the tables are
left as they are, and the script says so.

Run it on an idle machine: the README and docs/ state their figures for an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The files whose marked figures this script owns.
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
MARKER = re.compile(r"<!-- fig:([a-z0-9-]+) -->(.*?)<!-- /fig -->", re.S)
TABLE = re.compile(r"^<!-- table:([a-z0-9-]+) -->\n(.*?)^<!-- /table -->$", re.S | re.M)
LDPBENCH = [sys.executable, "-m", "ldpbench"]


def wall(command: list[str], repeats: int) -> float:
    """Median wall time of ``command`` (run from the repository root, into a fresh results folder)."""
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="ldpbench-figures-") as out:
            argv = [a.replace("{out}", out) for a in command]
            started = time.perf_counter()
            subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 100 else f"{value:.0f} s"


def milliseconds(value: float) -> str:
    ms = value * 1e3
    return f"{ms:.2g} ms" if ms < 10 else f"{ms:.0f} ms"


def rate(per_second: float) -> str:
    if per_second >= 1e6:
        return f"{per_second / 1e6:.3g} M"
    return f"{per_second / 1e3:.3g} k"


class Benchmarks:
    """pytest-benchmark medians, one pytest run per benchmark file, cached for the session."""

    def __init__(self) -> None:
        self._medians: dict[str, float] = {}
        self._done: set[str] = set()

    def median(self, file: str, test: str) -> float:
        if file not in self._done:
            with tempfile.TemporaryDirectory() as tmp:
                report = Path(tmp) / "bench.json"
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pytest",
                        "-q",
                        "-p",
                        "no:cacheprovider",
                        f"tests/benchmarks/{file}",
                        "--benchmark-enable",
                        "--benchmark-only",
                        f"--benchmark-json={report}",
                    ],
                    cwd=ROOT,
                    check=True,
                    capture_output=True,
                )
                for bench in json.loads(report.read_text())["benchmarks"]:
                    self._medians[bench["name"]] = bench["stats"]["median"]
            self._done.add(file)
        return self._medians[test]


@dataclass(frozen=True)
class Figure:
    """How to measure one figure and print it."""

    measure: Callable[[int, Benchmarks], str]
    how: str  #: the command a reader can run to check it


def _wall_figure(command: list[str]) -> Callable[[int, Benchmarks], str]:
    return lambda repeats, _: seconds(wall(command, repeats))


def _per_user_rates(_: int, bench: Benchmarks) -> str:
    # n of tests/benchmarks/test_bench_oracles.py's PER_USER table
    n = {"grr": 1_000_000, "hr": 1_000_000, "olh": 20_000, "oue": 20_000}
    r = {k: n[k] / bench.median("test_bench_oracles.py", f"test_bench_per_user[{k}]") for k in n}
    return (
        f"GRR {rate(r['grr'])} users/s, HR {rate(r['hr'])}/s (d = 1,000); "
        f"OLH {rate(r['olh'])}/s, OUE {rate(r['oue'])}/s (O(n d))"
    )


def _aggregate_kosarak(_: int, bench: Benchmarks) -> str:
    parts = [
        f"{name.upper()} {milliseconds(bench.median('test_bench_oracles.py', f'test_bench_aggregate_kosarak[{name}-1.0]'))}"
        for name in ("grr", "oue", "olh", "hr")
    ]
    return ", ".join(parts)


def span(values: list[float], unit: Callable[[float], str]) -> str:
    """``12–18 ms``: the smallest and largest of ``values`` (one figure when they print alike)."""
    low, high = unit(min(values)), unit(max(values))
    if low == high:
        return low
    (low_number, low_unit), high_unit = low.rsplit(" ", 1), high.rsplit(" ", 1)[1]
    return f"{low_number}–{high}" if low_unit == high_unit else f"{low}–{high}"


def seconds_or_ms(value: float) -> str:
    return milliseconds(value) if value < 0.1 else f"{value:.2g} s"


def _postprocess_kosarak(_: int, bench: Benchmarks) -> str:
    # ids of tests/benchmarks/test_bench_postprocess.py's PIPELINES (one step each)
    w20 = ["base", "base-pos", "post-pos", "base-cut", "norm", "norm-mul", "norm-cut", "norm-cut(variant=code)"]
    w20 += ["norm-sub", "norm-sub(algorithm=iterative)", "mle-apx"]
    post = "test_bench_postprocess.py"
    w20_worst = max(bench.median(post, f"test_bench_postprocessor[{name}]") for name in w20)
    # Power's posterior means computed afresh: power and power-ns share them per vector (power._RECENT),
    # so their own benchmarks time a reuse
    power = bench.median(post, "test_bench_power_counts_uncached")
    cal = "test_bench_calibrate.py"
    calibrate = [bench.median(cal, f"test_bench_calibrate_kosarak_scale[{eps}]") for eps in range(1, 6)]
    mle = [bench.median(cal, f"test_bench_calibrate_mle_fit_kosarak_scale[{eps}]") for eps in (1, 5)]
    return (
        f"≤ {milliseconds(w20_worst)} for the [W20] methods but Power ({milliseconds(power)}, once per vector "
        "for power and power-ns); "
        f"Calibrate {span(calibrate, milliseconds)} (prior fitted by MLE: {span(mle, seconds_or_ms)})"
    )


def _em_per_estimate(_: int, bench: Benchmarks) -> str:
    em = lambda test: milliseconds(bench.median("test_bench_em.py", test))  # noqa: E731
    return (
        f"EM {em('test_bench_em[em-mix-1070-adult]')} (adult, d = 224), "
        f"{em('test_bench_em[em-mix-1070-retail]')} (Retail, d = 16,470); everyone at ε = ln d: "
        f"{em('test_bench_em[em-lnd-full-adult]')} / {em('test_bench_em[em-lnd-full-retail]')}. "
        f"[MHS18]'s correction (`em-murakami`, adult): {em('test_bench_em_murakami_adult[mix-1070]')} / "
        f"{em('test_bench_em_murakami_adult[lnd-full]')}"
    )


FIGURES: dict[str, Figure] = {
    "quickstart-wall": Figure(
        _wall_figure([*LDPBENCH, "run", "specs/quickstart.yaml", "--out", "{out}"]),
        "time ldpbench run specs/quickstart.yaml",
    ),
    "kosarak-oracles-wall": Figure(
        _wall_figure([*LDPBENCH, "run", "specs/kosarak_oracles.yaml", "--out", "{out}"]),
        "time ldpbench run specs/kosarak_oracles.yaml",
    ),
    "kosarak-sweep-wall": Figure(
        _wall_figure([*LDPBENCH, "run", "specs/kosarak_sweep.yaml", "--out", "{out}"]),
        "time ldpbench run specs/kosarak_sweep.yaml",
    ),
    "ci-wall": Figure(_wall_figure(["scripts/run_ci_leaderboard.sh", "{out}"]), "time scripts/run_ci_leaderboard.sh"),
    "ci-report-wall": Figure(
        _wall_figure([*LDPBENCH, "report", "reports/ci-baseline", "--out", "{out}"]),
        "time ldpbench report reports/ci-baseline --out /tmp/report",
    ),
    "per-user-rates": Figure(_per_user_rates, "pytest tests/benchmarks/test_bench_oracles.py --benchmark-enable"),
    "aggregate-kosarak": Figure(_aggregate_kosarak, "pytest tests/benchmarks/test_bench_oracles.py --benchmark-enable"),
    "postprocess-kosarak": Figure(
        _postprocess_kosarak,
        "pytest tests/benchmarks/test_bench_postprocess.py tests/benchmarks/test_bench_calibrate.py --benchmark-enable",
    ),
    "em-per-estimate": Figure(_em_per_estimate, "pytest tests/benchmarks/test_bench_em.py --benchmark-enable"),
}


@dataclass(frozen=True)
class Table:
    """A table measured by one run of ``scripts/compare_pure_ldp.py`` in the peers' interpreter."""

    args: tuple[str, ...]  #: the script's arguments (``--markdown`` is added)

    @property
    def how(self) -> str:
        return "/tmp/peers-venv/bin/python scripts/compare_pure_ldp.py " + " ".join((*self.args, "--markdown"))

    def measure(self, python: str) -> str | None:
        """The table's Markdown (the script's whole output), or None when the peers are missing."""
        command = [python, str(ROOT / "scripts" / "compare_pure_ldp.py"), *self.args, "--markdown"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode == 2 and "not installed" in done.stderr:
            return None
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
        return done.stdout.strip() + "\n"


#: Whole tables, each measured in one run (ldpbench and its peers side by side, docs/scale-out.md).
TABLES: dict[str, Table] = {
    "peer-oracles": Table(("--n", "2000", "--big-n", "200000", "--d", "1024", "--epsilon", "1", "--rounds", "2")),
    "peer-heavy-hitters": Table(
        ("--heavy-hitters", "--n", "200", "--big-n", "1000000", "--bits", "16", "--epsilon", "4", "--rounds", "2")
    ),
}


def markers(text: str) -> list[str]:
    return [m.group(1) for m in MARKER.finditer(text)]


def tables(text: str) -> list[str]:
    return [m.group(1) for m in TABLE.finditer(text)]


def check() -> list[str]:
    """Problems with the markers: unknown keys, and known keys that no file uses."""
    problems, used, used_tables = [], set(), set()
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if "<!-- fig:" in line and not MARKER.search(line):
                problems.append(f"{path.relative_to(ROOT)}:{n}: a figure marker must open and close on one line")
        for key in markers(text):
            used.add(key)
            if key not in FIGURES:
                problems.append(f"{path.relative_to(ROOT)}: unknown figure {key!r} (known: {', '.join(FIGURES)})")
        blocks = tables(text)
        if len(blocks) != text.count("<!-- table:") or len(blocks) != text.count("<!-- /table -->"):
            problems.append(
                f"{path.relative_to(ROOT)}: a table block is a line <!-- table:KEY -->, the table, a line <!-- /table -->"
            )
        for key in blocks:
            used_tables.add(key)
            if key not in TABLES:
                problems.append(f"{path.relative_to(ROOT)}: unknown table {key!r} (known: {', '.join(TABLES)})")
    problems += [f"figure {key!r} is marked in no file" for key in sorted(set(FIGURES) - used)]
    problems += [f"table {key!r} is marked in no file" for key in sorted(set(TABLES) - used_tables)]
    return problems


def measure_tables(keys: list[str], python: str | None) -> dict[str, str]:
    """Each table's new text; a table whose peers are not installed is left out (left as it is)."""
    out: dict[str, str] = {}
    for key in keys:
        table = TABLES[key].measure(python) if python else None
        if table is None:
            why = "no --peers-python given" if not python else f"the peers are not installed for {python}"
            print(f"{key}: left as it is ({why}; {TABLES[key].how})", file=sys.stderr)
            continue
        out[key] = table
        print(f"{key}:    ({TABLES[key].how})\n{table}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", nargs="+", metavar="KEY", choices=sorted({*FIGURES, *TABLES}), help="measure only these"
    )
    parser.add_argument(
        "--peers-python",
        default=os.environ.get("LDPBENCH_PEERS_PYTHON"),
        help="interpreter of an environment with pure-LDP and multi-freq-ldpy, for the tables "
        "(default: $LDPBENCH_PEERS_PYTHON; without it the tables are left as they are)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per wall-time figure (median; default 3)")
    parser.add_argument("--dry-run", action="store_true", help="print the figures, change no file")
    parser.add_argument("--check", action="store_true", help="check the markers only (nothing is measured)")
    parser.add_argument("--force", action="store_true", help="measure even on a busy machine")
    args = parser.parse_args(argv)
    problems = check()
    if problems or args.check:
        print("\n".join(problems) or "figure markers: ok", file=sys.stderr)
        return 1 if problems else 0
    # The docs state figures for an idle machine: on a shared, busy one every wall time inflates
    # several-fold (measured here: 5 s became 54 s at load 10 on 2 cores), so refuse loudly.
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > 0.5 * cores and not args.force:
        print(
            f"docs_figures: the machine is busy (load {load:.1f} on {cores} cores); the docs quote figures "
            "for an idle machine. Measure when it is idle, or pass --force (and say so).",
            file=sys.stderr,
        )
        return 2
    bench = Benchmarks()
    values = {}
    for key in [k for k in args.only or FIGURES if k in FIGURES]:
        values[key] = FIGURES[key].measure(args.repeats, bench)
        print(f"{key}: {values[key]}    ({FIGURES[key].how})")
    measured = measure_tables([k for k in args.only or TABLES if k in TABLES], args.peers_python)
    if args.dry_run:
        return 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        new = MARKER.sub(lambda m: f"<!-- fig:{m.group(1)} -->{values.get(m.group(1), m.group(2))}<!-- /fig -->", text)
        new = TABLE.sub(
            lambda m: f"<!-- table:{m.group(1)} -->\n{measured.get(m.group(1), m.group(2))}<!-- /table -->", new
        )
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
