"""Shipped tables that a command wrote: which command, and whether they are still what it writes today.

``reports/generated.json`` lists every file under ``reports/`` that ldpbench wrote rather than a
person: its path, the command that writes it, the ldpbench version that wrote it, the fingerprint
of the output format at that time, and the file's sha256. ``tests/meta/test_generated_reports.py``
fails when

- the file changed since it was stamped (edited by hand, or regenerated without stamping);
- the format it was written in is no longer today's: the same rows rendered today come out
  different (the leaderboard gained tie marks, a column, another number format), so the shipped
  file is older than what its command produces now. The fingerprint is behavioural: a fixed set
  of result rows (a best row, a tied one, a worse one, a failed repeat) aggregated and rendered by
  today's code, hashed; a refactor that writes the same tables leaves it alone;
- a listed file that today's code can rewrite from a committed input (``from``: the CI baseline's
  ``leaderboard.md`` from its ``leaderboard.json``) comes out different; such a file needs no stamp.

After rerunning a listed file's command::

    .venv/bin/python scripts/generated_reports.py stamp reports/wang2020_consistency/leaderboard.md
    .venv/bin/python scripts/generated_reports.py check     # what the test runs
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "reports" / "generated.json"

#: The output formats a listed file can have, each with the function fingerprinting it.
LEADERBOARD_MARKDOWN = "leaderboard-markdown"


def _fixture_rows() -> list[dict]:
    """Result rows that exercise every mark of a leaderboard table: per budget, a best row, a row
    tied with it (paired differences of both signs), a row worse in every repeat, and a failed
    repeat; values chosen by hand, not drawn, so the fingerprint never depends on a generator."""
    rows = []
    base = [1.00, 1.10, 0.95, 1.20, 1.05, 0.90, 1.15, 1.00, 0.98, 1.12]
    wobble = [0.002, -0.001, 0.003, -0.002, 0.001, -0.003, 0.002, -0.001, 0.004, 0.001]
    for eps, scale in ((1.0, 1.0), (4.0, 0.01)):
        series = {
            "base": [v * scale for v in base],
            "norm-sub": [(v + w) * scale for v, w in zip(base, wobble)],
            "base-pos": [v * 1.3 * scale for v in base],
        }
        for pipeline, values in series.items():
            for repeat, value in enumerate(values):
                failed = pipeline == "base-pos" and repeat == 9
                rows.append(
                    dict(
                        cell_id=f"fixture-{eps}-{repeat}",
                        dataset="zipf(d=8,n=100,s=1)",
                        users="",
                        epsilon=eps,
                        oracle="grr",
                        pipeline=pipeline,
                        metric="mse",
                        greater_is_better=False,
                        repeat=repeat,
                        value=float("nan") if failed else value,
                        error="ValueError: fixture" if failed else None,
                        simulation="aggregate",
                        n=100,
                        d=8,
                        fingerprint="fixture",
                        elapsed=0.0,
                    )
                )
    return rows


def aggregate_fixture():  # -> pl.DataFrame
    """Today's leaderboard of :func:`_fixture_rows`."""
    from ldpbench.leaderboard.aggregate import aggregate

    return aggregate(_fixture_rows())


def leaderboard_markdown_fingerprint() -> str:
    """sha256 (16 hex digits) of today's Markdown leaderboard of :func:`_fixture_rows`."""
    from ldpbench.leaderboard import render

    text = render.render(aggregate_fixture(), "markdown")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


FINGERPRINTS = {LEADERBOARD_MARKDOWN: leaderboard_markdown_fingerprint}


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def regenerate(entry: dict) -> str | None:
    """The file's content regenerated from its committed input (``from``), or None without one."""
    source = entry.get("from")
    if source is None:
        return None
    import polars as pl

    from ldpbench.leaderboard.load import load_leaderboard
    from ldpbench.leaderboard.render import render

    return render(pl.DataFrame(load_leaderboard(ROOT / source)), "markdown")


def load_manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["files"]


def problems() -> list[str]:
    """Every listed file that is not what its command writes today, each with what to do."""
    from ldpbench.util.version import VERSION

    out = []
    today = {name: fingerprint() for name, fingerprint in FINGERPRINTS.items()}
    for entry in load_manifest():
        path = ROOT / entry["path"]
        redo = f"rerun `{entry['command']}`, then `python scripts/generated_reports.py stamp {entry['path']}`"
        if not path.is_file():
            out.append(f"{entry['path']}: listed in {MANIFEST.name} but missing")
            continue
        if entry["format"] not in today:
            out.append(f"{entry['path']}: unknown format '{entry['format']}' (known: {', '.join(today)})")
            continue
        fresh = regenerate(entry)
        if fresh is not None:  # the strongest check: today's code rewrites it from its committed input
            if fresh != path.read_text(encoding="utf-8"):
                out.append(f"{entry['path']}: differs from what `{entry['command']}` writes from {entry['from']} today")
            continue
        if file_sha256(path) != entry.get("sha256"):
            out.append(f"{entry['path']}: changed since it was stamped (edited by hand?): {redo}")
        if entry.get("fingerprint") != today[entry["format"]]:
            out.append(
                f"{entry['path']}: written in an older {entry['format']} format (ldpbench {entry.get('version')}, "
                f"fingerprint {entry.get('fingerprint')}; today's ldpbench {VERSION} writes {today[entry['format']]}): {redo}"
            )
    return out


def stamp(relpath: str) -> None:
    """Record ``relpath`` as written now by today's ldpbench (its entry must exist)."""
    from ldpbench.util.version import VERSION

    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    (entry,) = [e for e in data["files"] if e["path"] == relpath]
    entry.update(
        version=VERSION,
        fingerprint=FINGERPRINTS[entry["format"]](),
        sha256=file_sha256(ROOT / relpath),
    )
    MANIFEST.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv[:1] == ["stamp"] and len(argv) == 2:
        stamp(argv[1])
        return 0
    if argv == ["check"]:
        found = problems()
        print("\n".join(found) if found else f"OK: {len(load_manifest())} generated files are current")
        return 1 if found else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
