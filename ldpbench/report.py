"""A Markdown report of a run: the leaderboard tables and the papers' metric-vs-epsilon figures.

:func:`write_report` reads a results folder (``results.jsonl``, or a merged ``leaderboard.json``
written by :mod:`ldpbench.testing.leaderboard_check`) and writes ``report.md`` with one PNG per
(metric, users configuration) next to it:

- one panel per dataset, x = epsilon on a log scale (an ``inf`` budget sits one step right of the
  largest finite one, labelled ∞), y = the metric (log scale when every mean is positive and they
  span more than a decade), one line per oracle + pipeline, error bars = the 95% confidence
  interval of the mean over repeats (:data:`ldpbench.leaderboard.CONFIDENCE`);
- under personalized budgets (``users:``, no single epsilon) a bar chart per dataset instead.

Figures are drawn with matplotlib's object API on the Agg canvas: no pyplot, no global backend
switch, nothing shown on a screen, so a report can be written on a headless CI machine.
"""

from __future__ import annotations

import math
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .errors import UsageError
from .leaderboard import CONFIDENCE, format_epsilon, render
from .stats.ties import manifest_alpha
from .leaderboard_file import load_leaderboard_frame
from .store import RESULTS_FILE, ResultsStore

REPORT_FILE = "report.md"
#: Panels per row of a figure (one panel per dataset).
PANELS_PER_ROW = 3
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_LINESTYLES = ("-", "--", "-.", ":")


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


def slug(text: str) -> str:
    """A file-name-safe version of a label: ``set-query(rho=10)`` -> ``set-query_rho=10``."""
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", text).strip("_") or "metric"


def _epsilon_positions(epsilons: Sequence[float]) -> dict[float, float]:
    """x position of each epsilon: itself, and ``inf`` one octave right of the largest finite."""
    finite = [e for e in epsilons if math.isfinite(e)]
    top = max(finite) if finite else 1.0
    return {e: (e if math.isfinite(e) else top * 2.0) for e in epsilons}


def _series_style(oracles: list[str], pipelines: list[str], oracle: str, pipeline: str) -> dict[str, Any]:
    # Colour tells pipelines apart, marker and line style tell oracles apart: a reader can follow
    # either "all of OUE" or "all of Norm-Sub" across a panel.
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if len(pipelines) <= 10 else "tab20"]
    i, j = pipelines.index(pipeline), oracles.index(oracle)
    return {
        "color": cmap(i % cmap.N),
        "marker": _MARKERS[j % len(_MARKERS)],
        "linestyle": _LINESTYLES[j % len(_LINESTYLES)],
    }


def _error_bars(sub: pl.DataFrame) -> tuple[list[float], list[float]]:
    low, high = [], []
    for mean, lo, hi in sub.select("mean", "ci_low", "ci_high").iter_rows():
        low.append(mean - lo if math.isfinite(lo) else 0.0)
        high.append(hi - mean if math.isfinite(hi) else 0.0)
    return low, high


def _use_log_y(values: Sequence[float]) -> bool:
    good = [v for v in values if math.isfinite(v)]
    return bool(good) and min(good) > 0 and max(good) / min(good) > 10


def plot_group(lb: pl.DataFrame, metric: str, users: str, path: Path) -> Path:
    """One figure: panels per dataset for one (metric, users); returns ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, NullLocator

    datasets = list(dict.fromkeys(lb["dataset"].to_list()))
    oracles = list(dict.fromkeys(lb["oracle"].to_list()))
    pipelines = list(dict.fromkeys(lb["pipeline"].to_list()))
    personalized = bool(users) or lb["epsilon"].is_nan().all()
    ncols = min(PANELS_PER_ROW, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    series = lb.select("oracle", "pipeline").unique().height
    legend_cols = max(1, math.ceil(series / 26))
    legend_rows = math.ceil(series / legend_cols)
    height = max(3.6 * nrows, 0.17 * legend_rows + 0.9)
    fig = Figure(figsize=(4.6 * ncols + 2.4 * legend_cols, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    gib = lb["greater_is_better"].drop_nulls()
    direction = "" if gib.is_empty() else (" (higher is better)" if gib[0] else " (lower is better)")
    handles: dict[str, Any] = {}
    for k, dataset in enumerate(datasets):
        ax = axes[k // ncols][k % ncols]
        data = lb.filter(pl.col("dataset") == dataset)
        ax.set_title(dataset, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        if personalized:
            _bars(ax, data, oracles, pipelines, handles)
        else:
            _lines(ax, data, oracles, pipelines, handles, FixedLocator, NullLocator)
        ax.set_ylabel(metric + direction, fontsize=8)
        ax.tick_params(labelsize=8)
    for k in range(len(datasets), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    title = metric + (f" · users {users}" if users else "")
    fig.suptitle(f"{title} — mean over repeats, bars: {CONFIDENCE:.0%} CI", fontsize=10, x=0.02, ha="left")
    if handles:
        fig.legend(
            list(handles.values()), list(handles), loc="outside right upper", fontsize=7,
            ncols=legend_cols, frameon=False,
        )
    fig.savefig(path, dpi=110)
    return path


def _lines(ax: Any, data: pl.DataFrame, oracles: list[str], pipelines: list[str], handles: dict, FixedLocator: Any, NullLocator: Any) -> None:
    epsilons = sorted(set(e for e in data["epsilon"].to_list() if not math.isnan(e)))
    positions = _epsilon_positions(epsilons)
    means = []
    for oracle in oracles:
        for pipeline in pipelines:
            sub = data.filter(
                (pl.col("oracle") == oracle) & (pl.col("pipeline") == pipeline) & pl.col("mean").is_not_nan()
                & pl.col("epsilon").is_not_nan()
            ).sort("epsilon")
            if sub.is_empty():
                continue
            x = [positions[e] for e in sub["epsilon"].to_list()]
            y = sub["mean"].to_list()
            means.extend(y)
            label = f"{oracle} · {pipeline}"
            bar = ax.errorbar(
                x, y, yerr=_error_bars(sub), capsize=2, markersize=4, linewidth=1.2,
                label=label, **_series_style(oracles, pipelines, oracle, pipeline),
            )
            handles.setdefault(label, bar)
    ax.set_xscale("log")
    ticks = [positions[e] for e in epsilons]
    ax.xaxis.set_major_locator(FixedLocator(ticks or [1.0]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([("∞" if math.isinf(e) else f"{e:g}") for e in epsilons] or ["1"])
    ax.set_xlabel("ε", fontsize=9)
    if _use_log_y(means):
        ax.set_yscale("log")


def _bars(ax: Any, data: pl.DataFrame, oracles: list[str], pipelines: list[str], handles: dict) -> None:
    labels, heights, errs, colors = [], [], ([], []), []
    for oracle in oracles:
        for pipeline in pipelines:
            sub = data.filter((pl.col("oracle") == oracle) & (pl.col("pipeline") == pipeline))
            if sub.is_empty():
                continue
            labels.append(f"{oracle} · {pipeline}")
            mean = sub["mean"][0]
            heights.append(mean if math.isfinite(mean) else 0.0)
            lo, hi = _error_bars(sub)
            errs[0].append(lo[0] if math.isfinite(mean) else 0.0)
            errs[1].append(hi[0] if math.isfinite(mean) else 0.0)
            colors.append(_series_style(oracles, pipelines, oracle, pipeline)["color"])
    xs = range(len(labels))
    bars = ax.bar(xs, heights, yerr=errs, color=colors, capsize=2)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    for label, patch in zip(labels, bars.patches):
        handles.setdefault(label, patch)
    if _use_log_y(heights):
        ax.set_yscale("log")


# ----------------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------------


def _groups(lb: pl.DataFrame) -> list[tuple[str, str]]:
    """(metric, users) in order of first appearance."""
    return list(dict.fromkeys(zip(lb["metric"].to_list(), lb["users"].to_list())))


def _header(manifest: dict[str, Any] | None, source: Path, lb: pl.DataFrame) -> list[str]:
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
        f"commit `{(info.get('commit') or 'unknown')[:12]}`",
    ]
    if machine:
        facts.append(f"{machine.get('platform', '?')}, {machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')}")
    facts.append(f"written {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
    lines.append("- " + " · ".join(facts))
    lines.append(
        f"\nEach figure: one panel per dataset; one line per oracle · pipeline; points are the mean over "
        f"repeats and bars its {CONFIDENCE:.0%} confidence interval. Tables: mean ± standard error, "
        "the best mean of each column in bold.\n"
    )
    return lines


def _failure_locations(results: Path) -> dict[tuple[Any, ...], str]:
    """Where each failed group's first located error was raised (``file:line in func``), by
    leaderboard group; empty for a JSON leaderboard, which keeps no rows."""
    from .failures import failed_rows

    path = results.parent if results.is_file() and results.name == RESULTS_FILE else results
    if not (path.is_dir() and (path / RESULTS_FILE).is_file()):
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = failed_rows(ResultsStore(path).load())
    where: dict[tuple[Any, ...], str] = {}
    for r in rows.filter(pl.col("where").is_not_null()).iter_rows(named=True):
        where.setdefault((r["dataset"], r["users"], r["oracle"], r["pipeline"], r["metric"], r["error"]), r["where"])
    return where


def _failures(lb: pl.DataFrame, where: dict[tuple[Any, ...], str] | None = None) -> list[str]:
    failed = lb.filter(pl.col("failed") > 0)
    if failed.is_empty():
        return []
    where = where or {}
    lines = ["## Failures\n", "Rows whose plugin failed (the error, and where in plugin code it was raised, "
             "are stored with each result row; `ldpbench leaderboard RESULTS --failures` lists them all):\n"]
    rows = []
    for r in failed.iter_rows(named=True):
        eps = format_epsilon(r["epsilon"]).removeprefix("ε=")
        error = (r["error"] or "").replace("|", "\\|").replace("\n", " ")
        at = where.get((r["dataset"], r["users"], r["oracle"], r["pipeline"], r["metric"], r["error"]), "")
        at = f"`{at}`" if at else ""
        rows.append(f"| {r['dataset']} | {eps} | {r['oracle']} | {r['pipeline']} | {r['metric']} | {r['failed']} | {error} | {at} |")
    lines.append("| dataset | ε | oracle | pipeline | metric | failed repeats | error | where |")
    lines.append("|---|---|---|---|---|---|---|---|")
    lines.extend(rows)
    lines.append("")
    return lines


def write_report(results: str | Path, out_dir: str | Path | None = None, html: bool = False) -> Report:
    """Write ``report.md`` and its PNG figures for ``results`` into ``out_dir``.

    :param results: a results folder (``results.jsonl``), a folder with a merged
        ``leaderboard.json``, or a JSON leaderboard file.
    :param out_dir: where to write (default: ``<results folder>/report``).
    """
    results = Path(results)
    lb, manifest = load_leaderboard_frame(results)
    folder = results if results.is_dir() else results.parent
    out = Path(out_dir) if out_dir is not None else folder / "report"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc}") from None
    lines = _header(manifest, results, lb)
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
        figure = plot_group(sub, metric, users, out / f"fig-{name}.png")
        report.figures.append(figure)
        heading = metric + (f" · users {users}" if users else "")
        lines.append(f"## {heading}\n")
        lines.append(f"![{heading}]({figure.name})\n")
        tables = render(sub, "markdown").rstrip("\n").split("\n")
        lines.extend(line.replace("### ", "#### ", 1) for line in tables if not line.startswith("_mean ±"))
        lines.append("")
    from .report_sections import baseline_section, ranks_section, theory_section

    lines.extend(baseline_section(lb))
    lines.extend(theory_section(lb))
    rank_lines, cd_figures = ranks_section(lb, out, manifest_alpha(manifest))
    lines.extend(rank_lines)
    report.rank_figures.extend(cd_figures)
    lines.extend(_failures(lb, _failure_locations(results)))
    report.markdown.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    if html:
        from .html_report import write_html

        title = lines[0].lstrip("# ").strip() if lines else "ldpbench report"
        report.html = write_html(lb, manifest, report.figures, report.rank_figures,
                                 "\n".join(rank_lines), out, title)
    return report
