"""Run a leaderboard of one or more specs and gate it against a committed baseline.

A CI leaderboard is often more than one grid: EM needs an oracle with a channel (GRR, HR), Blender
takes other metrics than a pure oracle, so ldpbench's own CI leaderboard is three specs
(``specs/ci*.yaml``). :func:`run_leaderboard` runs several specs into one folder and writes one
merged leaderboard; :func:`check_leaderboard` then compares it with a baseline exactly as
``ldpbench compare`` does. The pytest plugin (:mod:`ldpbench.testing.pytest_plugin`) wraps it in
the ``ldpbench_leaderboard`` fixture, so a plugin repository can gate its leaderboard in pytest.

Layout of ``OUT`` after a run::

    OUT/leaderboard.json   every spec's leaderboard rows, merged (what `ldpbench compare` reads)
    OUT/leaderboard.md     the same as Markdown tables
    OUT/manifest.json      the run manifests of every spec (resolved spec, seed, plugins and
                           versions, commit, machine), under "runs"
    OUT/<spec name>/       each spec's own results folder (results.jsonl, manifest.json, ...)

From a shell (exit codes as ``ldpbench run``: 0 ok, 2 spec or usage error, 3 a plugin failed,
5 the results could not be written)::

    python -m ldpbench.testing.gate specs/ci.yaml specs/ci-em.yaml --out results/ci
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ldpbench.errors import ExitCode, LdpbenchError, SpecError, UsageError
from ldpbench.leaderboard.compare import DEFAULT_Z
from ldpbench.leaderboard.provenance import REFRESH_ORDER
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.store import ResultsStore, write_leaderboard_json
from ldpbench.results.versioning import SCHEMA_VERSION

LEADERBOARD_JSON = "leaderboard.json"
LEADERBOARD_MD = "leaderboard.md"
MANIFEST_JSON = "manifest.json"
#: ``kind`` of a merged manifest (a single run's manifest has none).
MERGED_KIND = "ldpbench-leaderboard"


@dataclass
class SpecRun:
    """One spec of a leaderboard run."""

    name: str
    spec_path: str
    out_dir: Path
    cells_total: int
    cells_run: int
    failed_rows: int
    errors: list[str]
    seconds: float
    rows: list[dict[str, Any]]


@dataclass
class LeaderboardRun:
    """The outcome of :func:`run_leaderboard`."""

    out_dir: Path
    runs: list[SpecRun]
    rows: list[dict[str, Any]]  #: the merged leaderboard (JSON-ready dicts)
    seconds: float = 0.0

    @property
    def failed_rows(self) -> int:
        return sum(r.failed_rows for r in self.runs)

    @property
    def errors(self) -> list[str]:
        return [e for r in self.runs for e in r.errors]

    @property
    def exit_code(self) -> int:
        return int(ExitCode.PLUGIN if self.failed_rows else ExitCode.OK)

    @property
    def leaderboard_path(self) -> Path:
        return self.out_dir / LEADERBOARD_JSON


def _load(spec_path: str | Path, plugins_dirs: Sequence[str]) -> tuple[Any, Any, list[str]]:
    """Plugins and the validated spec, with the same plugin-folder rules as the CLI."""
    from ldpbench.loading.manager import build_plugins
    from ldpbench.spec.load import read_document
    from ldpbench.spec.validate import load_spec, plugin_dirs_for

    doc = read_document(spec_path)
    dirs = plugin_dirs_for(spec_path, plugins_dirs, doc=doc)
    plugins = build_plugins(dirs)
    return plugins, load_spec(spec_path, plugins, document=doc), dirs


def run_leaderboard(
    specs: Sequence[str | Path],
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str | None = None,
    plugins_dirs: Sequence[str | Path] = (),
    seed: int | None = None,
    progress: bool | None = False,
    rerun: bool = False,
) -> LeaderboardRun:
    """Run ``specs`` (each into ``out/<spec name>/``) and write the merged leaderboard to ``out``.

    Every spec is validated before the first one runs, so a typo in the third spec costs no
    time. ``seed`` replaces every spec's seed (to check that another seed is within the noise).
    Raises :class:`~ldpbench.errors.SpecError` or :class:`~ldpbench.errors.UsageError`; a plugin
    that raises fails only its own rows (see :attr:`LeaderboardRun.exit_code`).
    """
    from ldpbench.leaderboard.render import render
    from ldpbench.results.manifest import git_commit, git_dirty, machine_info
    from ldpbench.runner import run_spec
    from ldpbench.util.provenance import portable_path
    from ldpbench.util.version import VERSION

    if not specs:
        raise UsageError("name at least one spec")
    if seed is not None and not (0 <= seed < 2**63):
        raise UsageError(f"--seed must be between 0 and {2**63 - 1}, got {seed}")
    started = time.perf_counter()
    out = Path(out)
    loaded = []
    problems: list[str] = []
    for path in specs:
        try:
            plugins, spec, dirs = _load(path, [str(d) for d in plugins_dirs])
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        if seed is not None:
            spec = dataclasses.replace(spec, seed=seed, resolved={**spec.resolved, "seed": seed})
        loaded.append((str(path), plugins, spec, dirs))
    if problems:
        raise SpecError(problems)
    names = [spec.name for _, _, spec, _ in loaded]
    if len(set(names)) != len(names):
        raise UsageError(f"two specs share a name ({', '.join(names)}); each needs its own results folder")

    runs: list[SpecRun] = []
    merged: list[dict[str, Any]] = []
    frames = []
    manifests: dict[str, Any] = {}
    for path, plugins, spec, _dirs in loaded:
        outcome = run_spec(
            spec,
            plugins,
            out / spec.name,
            workers=workers,
            executor=executor,
            progress=progress,
            rerun=rerun,
        )
        rows = outcome.leaderboard.to_dicts()
        runs.append(
            SpecRun(
                spec.name,
                path,
                outcome.out_dir,
                outcome.cells_total,
                outcome.cells_run,
                outcome.failed_rows,
                list(outcome.errors),
                outcome.seconds,
                rows,
            )
        )
        merged.extend(rows)
        frames.append(outcome.leaderboard)
        run_manifest = ResultsStore(outcome.out_dir).read_manifest()
        run_manifest.pop("cell_order", None)  # hundreds of hashes; the run folder keeps them
        manifests[spec.name] = run_manifest
    _check_unique(merged, runs)

    import polars as pl

    board = pl.concat(frames, how="vertical")
    write_leaderboard_json(out / LEADERBOARD_JSON, render(board, "json"))
    write_leaderboard_json(out / LEADERBOARD_MD, render(board, "markdown"))
    first = next(iter(manifests.values()), {})
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "kind": MERGED_KIND,
        "specs": [portable_path(r.spec_path) for r in runs],
        "seed_override": seed,
        "ldpbench_version": VERSION,
        "commit": first.get("commit") or git_commit(Path.cwd()),
        "dirty": first.get("dirty") if first.get("commit") else git_dirty(Path.cwd()),
        "machine": first.get("machine") or machine_info(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": manifests,
    }
    write_leaderboard_json(out / MANIFEST_JSON, dumps_json(manifest, indent=2) + "\n")
    return LeaderboardRun(out, runs, merged, time.perf_counter() - started)


def _check_unique(rows: Iterable[dict[str, Any]], runs: Sequence[SpecRun]) -> None:
    from ldpbench.leaderboard.compare import _describe_key, row_key

    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        key = row_key({**row, "epsilon": float("nan") if row["epsilon"] is None else row["epsilon"]})
        if key in seen:
            raise UsageError(
                f"the specs {', '.join(r.spec_path for r in runs)} produce the same leaderboard row "
                f"twice ({_describe_key(key)}); give them different datasets or mechanisms"
            )
        seen.add(key)


# ----------------------------------------------------------------------------------------------
# The gate
# ----------------------------------------------------------------------------------------------


class BaselineRefused(LdpbenchError):
    """A baseline would be written from a run in which plugins failed (exit 3, as a failed run)."""

    exit_code = ExitCode.PLUGIN


#: How many failed rows a refusal lists before it summarizes the rest.
_LISTED_FAILURES = 20


def failed_rows_text(rows: Iterable[dict[str, Any]], most: int = _LISTED_FAILURES) -> list[str]:
    """One line per leaderboard row with failed repeats: its identity, the count and the error."""
    from ldpbench.leaderboard.render import format_epsilon

    failed = [r for r in rows if r.get("failed")]
    lines = []
    for r in failed[:most]:
        eps = format_epsilon(r["epsilon"])  # None or NaN: personalized budgets
        who = " ".join(str(x) for x in (r["dataset"], r["users"] or eps, r["oracle"], r["pipeline"], r["metric"]))
        total = r["failed"] + (r.get("repeats") or 0)
        lines.append(f"{who}: {r['failed']} of {total} repeats failed" + (f": {r['error']}" if r.get("error") else ""))
    if len(failed) > most:
        lines.append(f"... and {len(failed) - most} more rows")
    return lines


@dataclass
class LeaderboardCheck:
    """A leaderboard run and its comparison with the baseline."""

    run: LeaderboardRun
    comparison: Any  #: ldpbench.leaderboard.compare.Comparison
    markdown: str
    baseline: Path
    updated: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool(self.comparison is not None and self.comparison.regressed)

    @property
    def exit_code(self) -> int:
        if self.regressed:
            return int(ExitCode.REGRESSION)
        return int(ExitCode.OK)

    @property
    def summary(self) -> str:
        """One line: rows compared, better, worse, not comparable, missing (or the update)."""
        from ldpbench.leaderboard.compare import summary_line

        if self.comparison is None:
            return self.notes[0] if self.notes else f"baseline {self.baseline} written ({len(self.run.rows)} rows)"
        return f"{summary_line(self.comparison)} (baseline {self.baseline})"


def baseline_manifest(baseline: Path) -> Path:
    """Where the manifest of ``baseline`` goes: ``manifest.json`` beside a ``leaderboard.json``,
    otherwise ``<stem>.manifest.json``."""
    from ldpbench.leaderboard.provenance import manifest_path

    return manifest_path(baseline)


def write_baseline(run: LeaderboardRun, baseline: str | Path, manifest: dict[str, Any] | None = None) -> Path:
    """Copy a run's merged leaderboard (and manifest) to ``baseline``.

    The manifest goes next to it: ``manifest.json`` beside a ``leaderboard.json``, otherwise
    ``<stem>.manifest.json``. ``manifest`` replaces the run's (the update's ``dirty``).
    """
    baseline = Path(baseline)
    baseline.parent.mkdir(parents=True, exist_ok=True)
    baseline.write_text((run.out_dir / LEADERBOARD_JSON).read_text(encoding="utf-8"), encoding="utf-8")
    target = baseline_manifest(baseline)
    if manifest is None:
        target.write_text((run.out_dir / MANIFEST_JSON).read_text(encoding="utf-8"), encoding="utf-8")
    else:
        target.write_text(dumps_json(manifest, indent=2) + "\n", encoding="utf-8")
    return baseline


def baseline_folder(baseline: str | Path, specs: Sequence[str | Path] = ()) -> list[Path]:
    """What a baseline's ``dirty`` flag leaves out: the baseline's own folder (``reports/baseline/``),
    or only its two files where that folder is the repository's top or holds a spec."""
    baseline = Path(baseline).resolve()
    folder = baseline.parent
    from ldpbench.results.manifest import git_toplevel

    top = git_toplevel(folder if folder.is_dir() else Path.cwd())
    holds_spec = any(_inside(Path(s).resolve(), folder) for s in specs)
    if top is None or folder == top or holds_spec or not _inside(folder, top):
        return [baseline, baseline_manifest(baseline).resolve()]
    return [folder]


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def baseline_dirty(baseline: str | Path, specs: Sequence[str | Path], out: str | Path | None = None) -> bool | None:
    """A baseline's ``dirty``: uncommitted changes OUTSIDE its own folder when it is refreshed
    (nor in ``out``, the update run's results folder: output, not code).

    Refreshing a baseline rewrites ``reports/baseline/``; counting that as a change would mark
    every refresh after the first one dirty, even from a committed tree. The documented order
    (commit the code, refresh the baseline, commit the baseline) gives ``dirty: false``.
    """
    from ldpbench.results.manifest import git_dirty

    where = Path(specs[0]).resolve().parent if specs else Path.cwd()
    skip = baseline_folder(baseline, specs) + ([Path(out).resolve()] if out is not None else [])
    return git_dirty(where, exclude=skip)


def check_leaderboard(
    specs: str | Path | Sequence[str | Path],
    baseline: str | Path,
    *,
    out: str | Path,
    thresholds: Sequence[str] = (),
    z: float = DEFAULT_Z,
    workers: int | None = 1,
    executor: str | None = None,
    plugins_dirs: Sequence[str | Path] = (),
    seed: int | None = None,
    update: bool = False,
    allow_missing: bool = False,
    allow_not_comparable: bool = False,
) -> LeaderboardCheck:
    """Run ``specs`` into ``out`` and compare the leaderboard with ``baseline`` (``ldpbench compare``).

    :param thresholds: ``--threshold`` values: ``"mse:5%"``, ``"ndcg:0.01"``, a bare ``"2%"``.
    :param z: the noise multiple (``--z``), :data:`DEFAULT_Z` by default.
    :param update: write the run's leaderboard to ``baseline`` instead of comparing (the way to
        create or refresh a baseline). Refused when a plugin failed in the run.
    :param allow_missing: baseline rows the run no longer produces do not fail the check
        (``ldpbench compare --allow-missing``).
    :param allow_not_comparable: rows whose fingerprints differ from the baseline's (a plugin
        changed on purpose) do not fail the check (``ldpbench compare --allow-not-comparable``).
    :raises UsageError: no baseline file (and ``update`` not set), a baseline that is not a
        leaderboard of this schema version (checked before anything runs), or bad thresholds.
    :raises BaselineRefused: ``update`` with failed rows in the run.
    """
    from ldpbench.leaderboard.compare import compare, load_leaderboard, parse_thresholds, render_comparison

    parsed = parse_thresholds(thresholds)  # bad syntax fails before anything runs
    specs = [specs] if isinstance(specs, (str, Path)) else list(specs)
    baseline = Path(baseline)
    if not update and not baseline.is_file():
        raise UsageError(
            f"no baseline leaderboard at {baseline}; create it with update=True "
            "(pytest --ldpbench-update-baseline), or copy one written by a run"
        )
    # Read (and version-check) the baseline before the run: a baseline of another schema, or
    # not a leaderboard at all, is reported at once instead of after a minute of computing.
    base_rows = None if update else load_leaderboard(baseline, "baseline")
    if base_rows is not None:
        from ldpbench.leaderboard.compare import check_baseline_means

        check_baseline_means(base_rows, str(baseline))
    run = run_leaderboard(specs, out, workers=workers, executor=executor, plugins_dirs=plugins_dirs, seed=seed)
    if update:
        if run.failed_rows:
            # A baseline with failed rows makes every later check pass those rows ("failing in
            # both"): the bug would be frozen in. scripts/update_ci_baseline.sh refuses too.
            listing = "\n".join(f"  {line}" for line in failed_rows_text(run.rows))
            raise BaselineRefused(
                f"refusing to write the baseline {baseline}: plugins failed in {run.failed_rows} result "
                f"rows of the run (in {out}), and a baseline must not record failures. Fix the plugin "
                f"and run again. Failed leaderboard rows:\n{listing}"
            )
        manifest = _read_json(run.out_dir / MANIFEST_JSON)
        if manifest.get("commit"):
            # dirty = uncommitted changes outside the baseline's own folder (which this update
            # rewrites): see baseline_dirty
            dirty = baseline_dirty(baseline, specs, out)
            manifest["dirty"] = dirty
            for record in (manifest.get("runs") or {}).values():
                if isinstance(record, dict) and "dirty" in record:
                    record["dirty"] = dirty
        written = write_baseline(run, baseline, manifest or None)
        note = (
            f"baseline written to {written.resolve()} and {baseline_manifest(written).resolve()} "
            f"({len(run.rows)} rows); commit both"
        )
        notes = [note]
        if manifest.get("dirty"):
            notes.append(
                f"warning: the work tree has uncommitted changes outside the baseline's folder: the "
                f"manifest records commit {str(manifest.get('commit'))[:12]} with dirty: true (that "
                f"commit did not produce these numbers). For a clean manifest (the baseline's own folder "
                f"does not count), {REFRESH_ORDER}"
            )
        return LeaderboardCheck(run, None, "\n".join(notes) + "\n", baseline, updated=True, notes=notes)
    assert base_rows is not None  # loaded above whenever update is off
    current = load_leaderboard(run.leaderboard_path, "current")
    from ldpbench.leaderboard.provenance import read_manifest

    result = compare(
        base_rows,
        current,
        parsed,
        z,
        baseline_name=str(baseline),
        current_name=str(run.leaderboard_path),
        allow_missing=allow_missing,
        allow_not_comparable=allow_not_comparable,
        manifests=(read_manifest(baseline), read_manifest(run.leaderboard_path)),
    )
    markdown = render_comparison(result, "markdown", only_changed=True)
    return LeaderboardCheck(run, result, markdown, baseline, notes=list(result.blockers) + list(result.notes))


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object written by this run (an empty one if it cannot be read)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ----------------------------------------------------------------------------------------------
# python -m ldpbench.testing.gate
# ----------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ldpbench.testing.gate",
        description="Run one or more specs into OUT/<spec name>/ and write the merged leaderboard "
        "OUT/leaderboard.json (for `ldpbench compare`), OUT/leaderboard.md and OUT/manifest.json.",
        epilog="exit status: 0 ok, 2 spec or usage error, 3 a plugin failed (its rows are marked), "
        "5 the results could not be written (disk full, read-only).",
    )
    p.add_argument("specs", nargs="+", metavar="SPEC", help="YAML spec files")
    p.add_argument("--out", required=True, metavar="DIR", help="results folder")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: one per core)")
    p.add_argument("--executor", metavar="NAME", help="executor plugin (in-process, process-pool, dask)")
    p.add_argument("--seed", type=int, metavar="S", help="replace every spec's seed")
    p.add_argument("--rerun", action="store_true", help="recompute every cell")
    p.add_argument(
        "--plugins-dir", action="append", default=[], metavar="DIR", help="load plugins from DIR (repeatable)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.workers is not None and args.workers < 0:
            raise UsageError("--workers must be 0 (one per core) or more")
        run = run_leaderboard(
            args.specs,
            args.out,
            workers=args.workers,
            executor=args.executor,
            plugins_dirs=args.plugins_dir,
            seed=args.seed,
            progress=None,
            rerun=args.rerun,
        )
    except SpecError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        return int(exc.exit_code)
    except LdpbenchError as exc:
        print(f"ldpbench: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    for r in run.runs:
        print(
            f"ldpbench: {r.name}: {r.cells_total} cells ({r.cells_run} run) in {r.seconds:.1f} s"
            + (f"; {r.failed_rows} rows failed" if r.failed_rows else ""),
            file=sys.stderr,
        )
    for err in list(dict.fromkeys(run.errors))[:10]:
        print(f"  {err}", file=sys.stderr)
    print(
        f"ldpbench: {len(run.rows)} leaderboard rows in {run.leaderboard_path} ({run.seconds:.1f} s)", file=sys.stderr
    )
    return run.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
