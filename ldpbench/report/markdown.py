"""A Markdown report of a run: the leaderboard tables and the papers' metric-vs-epsilon figures.

:func:`write_report` reads a results folder (``results.jsonl``, or a merged ``leaderboard.json``
written by :mod:`ldpbench.testing.gate`) and writes ``report.md`` with the PNG
figures of each (metric, users configuration) next to it, drawn by :mod:`ldpbench.report.figures`: one
panel per dataset x oracle or pipeline (or as ``facet`` says), at most a dozen lines a panel, identical series
drawn once and named together, one shared legend, 95% confidence intervals as error bars, a linear
epsilon axis and a log y axis where the metric spans orders of magnitude; under personalized
budgets (``users:``, no single epsilon) bars instead of lines.

Figures are drawn with matplotlib's object API on the Agg canvas: no pyplot, no global backend
switch, nothing shown on a screen, so a report can be written on a headless CI machine.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.errors import UsageError
from ldpbench.leaderboard.aggregate import CONFIDENCE
from ldpbench.leaderboard.load import load_leaderboard_frame
from ldpbench.leaderboard.render import format_epsilon, render
from ldpbench.report.figures import MAX_LINES, apply_only, plot_metric, slug
from ldpbench.results.read import read_run
from ldpbench.results.store import RESULTS_FILE
from ldpbench.stats.ties import manifest_alpha

REPORT_FILE = "report.md"


@dataclass
class Report:
    """What :func:`write_report` wrote."""

    markdown: Path
    figures: list[Path] = field(default_factory=list)
    rows: int = 0
    rank_figures: list[Path] = field(default_factory=list)  # critical-difference diagrams
    html: Path | None = None  # report.html with --html


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------------


def _groups(lb: pl.DataFrame) -> list[tuple[str, str]]:
    """(metric, users) in order of first appearance."""
    return list(dict.fromkeys(zip(lb["metric"].to_list(), lb["users"].to_list())))


def _header(
    manifest: dict[str, Any] | None, source: Path, lb: pl.DataFrame, facet: Sequence[str] | None = None
) -> list[str]:
    lines = []
    runs = (manifest or {}).get("runs") if isinstance((manifest or {}).get("runs"), dict) else None
    specs = list(runs.values()) if runs else ([manifest] if manifest else [])
    names = [str((m.get("spec") or {}).get("name", "?")) for m in specs] or [source.name]
    lines.append(f"# ldpbench report: {', '.join(names)}\n")
    for m in specs:
        spec = m.get("spec") or {}
        if spec.get("description"):
            lines.append(f"- **{spec.get('name')}** — {spec['description']}")
        lines.append(
            f"- **{spec.get('name', '?')}**: seed {m.get('seed', spec.get('seed', '?'))}, "
            f"{spec.get('repeats', '?')} repeats, simulation {spec.get('simulation', '?')}, "
            f"spec `{spec.get('file', '?')}`"
        )
    info = manifest or {}
    machine = info.get("machine") or {}
    facts = [
        f"results: `{source}`",
        f"ldpbench {info.get('ldpbench_version', '?')}",
        (f"commit `{info['commit'][:12]}`" if info.get("commit") else "no commit recorded")
        + (" (uncommitted changes)" if info.get("dirty") else ""),
    ]
    if machine:
        facts.append(
            f"{machine.get('platform', '?')}, {machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')}"
        )
    facts.append(f"written {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
    lines.append("- " + " · ".join(facts))
    panels = (
        "dataset x oracle or pipeline, whichever has fewer values (the more numerous share a panel)"
        if facet is None
        else " x ".join(facet) or "metric"
    )
    lines.append(
        f"\nEach figure: one panel per {panels}; points are the mean over repeats and "
        f"bars its {CONFIDENCE:.0%} confidence interval; series with identical values are drawn once and "
        "named together (a = b). Tables: mean ± standard error, the best mean of each column in bold.\n"
    )
    return lines


def _failure_locations(results: Path) -> dict[tuple[Any, ...], str]:
    """Where each failed group's first located error was raised (``file:line in func``), by
    leaderboard group; empty for a JSON leaderboard, which keeps no rows."""
    from ldpbench.boundary.failures import failed_rows

    path = results.parent if results.is_file() and results.name == RESULTS_FILE else results
    if not (path.is_dir() and (path / RESULTS_FILE).is_file()):
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = failed_rows(read_run(path, quiet=True).rows)
    where: dict[tuple[Any, ...], str] = {}
    for r in rows.filter(pl.col("where").is_not_null()).iter_rows(named=True):
        where.setdefault((r["dataset"], r["users"], r["oracle"], r["pipeline"], r["metric"], r["error"]), r["where"])
    return where


def _failures(lb: pl.DataFrame, where: dict[tuple[Any, ...], str] | None = None) -> list[str]:
    failed = lb.filter(pl.col("failed") > 0)
    if failed.is_empty():
        return []
    where = where or {}
    lines = [
        "## Failures\n",
        "Rows whose plugin failed (the error, and where in plugin code it was raised, "
        "are stored with each result row; `ldpbench leaderboard RESULTS --failures` lists them all):\n",
    ]
    rows = []
    for r in failed.iter_rows(named=True):
        eps = format_epsilon(r["epsilon"]).removeprefix("ε=")
        error = (r["error"] or "").replace("|", "\\|").replace("\n", " ")
        at = where.get((r["dataset"], r["users"], r["oracle"], r["pipeline"], r["metric"], r["error"]), "")
        at = f"`{at}`" if at else ""
        rows.append(
            f"| {r['dataset']} | {eps} | {r['oracle']} | {r['pipeline']} | {r['metric']} | {r['failed']} | {error} | {at} |"
        )
    lines.append("| dataset | ε | oracle | pipeline | metric | failed repeats | error | where |")
    lines.append("|---|---|---|---|---|---|---|---|")
    lines.extend(rows)
    lines.append("")
    return lines


def _identity_evidence(
    results: Path, manifest: dict[str, Any] | None, lb: pl.DataFrame
) -> tuple[Mapping[Any, Any], str]:
    """Per-repeat values to judge identical series by, or the aggregates where none are stored."""
    from ldpbench.leaderboard.identical import aggregate_values, load_repeat_values

    values = load_repeat_values(results, manifest)
    if values is not None:
        return values, "same per-repeat values"
    return aggregate_values(lb), "same mean, standard error and CI: no per-repeat values stored"


def _merged_note(merged: list[tuple[str, str]], evidence: str) -> list[str]:
    if not merged:
        return []
    where: dict[str, list[str]] = {}
    for panel, label in merged:
        where.setdefault(label, []).append(panel)
    items = [
        f"{label} ({panels[0] if len(panels) == 1 else f'{len(panels)} panels'})" for label, panels in where.items()
    ]
    return [f"Drawn once, identical values ({evidence}): " + "; ".join(items) + ".\n"]


def write_report(
    results: str | Path,
    out_dir: str | Path | None = None,
    html: bool = False,
    facet: Sequence[str] | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
    max_lines: int = MAX_LINES,
) -> Report:
    """Write ``report.md`` and its PNG figures for ``results`` into ``out_dir``.

    :param results: a results folder (``results.jsonl``), a folder with a merged
        ``leaderboard.json``, or a JSON leaderboard file.
    :param out_dir: where to write (default: ``<results folder>/report``).
    :param facet: the columns making the panels of a figure (:data:`ldpbench.report.figures.FACET_COLUMNS`);
        None: chosen per figure (:func:`ldpbench.report.figures.choose_facet`).
    :param only: keep only these values of these columns (``{"oracle": ["grr"]}``), in figures
        and tables alike.
    :param max_lines: the most lines in one panel; more are split into parts.
    """
    results = Path(results)
    lb, manifest = load_leaderboard_frame(results)
    lb = apply_only(lb, only or {})
    values, evidence = _identity_evidence(results, manifest, lb)
    folder = results if results.is_dir() else results.parent
    out = Path(out_dir) if out_dir is not None else folder / "report"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc}") from None
    lines = _header(manifest, results, lb, facet)
    report = Report(out / REPORT_FILE, rows=lb.height)
    if lb.is_empty():
        lines.append("No results.\n")
    used: set[str] = set()
    for metric, users in _groups(lb):
        sub = lb.filter((pl.col("metric") == metric) & (pl.col("users") == users))
        name = slug(metric + (f"-users-{users}" if users else ""))
        while name in used:
            name += "_"
        used.add(name)
        drawn = plot_metric(sub, metric, users, out / f"fig-{name}.png", facet, values, evidence, max_lines)
        report.figures.extend(drawn.paths)
        heading = metric + (f" · users {users}" if users else "")
        lines.append(f"## {heading}\n")
        lines.extend(f"![{heading}]({figure.name})\n" for figure in drawn.paths)
        lines.extend(_merged_note(drawn.merged, evidence))
        tables = render(sub, "markdown", alpha=manifest_alpha(manifest)).rstrip("\n").split("\n")
        lines.extend(line.replace("### ", "#### ", 1) for line in tables if not line.startswith("_mean ±"))
        lines.append("")
    from ldpbench.report.sections import baseline_section, ranks_section, theory_section, warnings_section

    lines.extend(baseline_section(lb))
    lines.extend(theory_section(lb))
    lines.extend(warnings_section(lb))
    rank_lines, cd_figures = ranks_section(lb, out, manifest_alpha(manifest))
    lines.extend(rank_lines)
    report.rank_figures.extend(cd_figures)
    where = _failure_locations(results)
    lines.extend(_failures(lb, where))
    report.markdown.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    if html:
        from ldpbench.report.html import write_html

        title = lines[0].lstrip("# ").strip() if lines else "ldpbench report"
        report.html = write_html(
            lb, manifest, report.figures, report.rank_figures, "\n".join(rank_lines), out, title, where
        )
    return report
