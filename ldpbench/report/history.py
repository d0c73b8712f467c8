"""A leaderboard's history: each row's metric across several results folders, gate flags marked.

asv's users read a benchmark's history as a line over commits with the regressions marked; this is
that view for a leaderboard. :func:`write_history` takes results folders in order (for example the
CI leaderboard at successive commits), and writes ``history.md`` (and ``report.html`` with
``html``) into the output folder:

- x = the folders in the order given, labelled by the commit in each manifest (the folder's name
  when the manifest has none); y = each row's mean with its 95% confidence interval; panels per
  dataset x oracle x epsilon (``facet`` as in :mod:`ldpbench.report.figures`), lines per pipeline, series
  identical in every folder's aggregates drawn once;
- between every two consecutive folders, exactly what the CI gate would flag
  (:func:`ldpbench.leaderboard.compare.compare` with the same thresholds and noise multiple, on the rows
  :func:`ldpbench.leaderboard.compare.load_leaderboard` reads): a regression (worse, failing, more failures,
  missing, not comparable) is a red cross on the later point, a change for the better a green dot,
  and every flag is listed with its reason.
"""

from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.errors import UsageError
from ldpbench.leaderboard.aggregate import CONFIDENCE, GROUP_COLUMNS
from ldpbench.leaderboard.compare import (
    DEFAULT_Z,
    LEADERBOARD_FILE,
    Change,
    Comparison,
    Thresholds,
    compare,
    load_leaderboard,
)
from ldpbench.leaderboard.identical import aggregate_values, row_key
from ldpbench.leaderboard.load import load_leaderboard_frame
from ldpbench.leaderboard.render import format_epsilon, format_number
from ldpbench.report.figures import DEFAULT_FACET, FACET_COLUMNS, MAX_LINES, apply_only, build_panels, draw_panels, slug
from ldpbench.results.store import MANIFEST_FILE, RESULTS_FILE

HISTORY_FILE = "history.md"
#: Characters of a commit id shown on the x axis (as ``git log --oneline``).
COMMIT_CHARS = 8


@dataclass
class HistoryPoint:
    """One results folder of the history."""

    path: Path
    label: str  # x-axis label: the short commit, or the folder name
    commit: str | None
    created: str | None
    frame: pl.DataFrame  # its leaderboard


@dataclass
class Flag:
    """A change the gate flags between point ``index - 1`` and point ``index``."""

    index: int
    change: Change
    kind: str  # "regression" or "better" (ldpbench.report.figures.FLAG_STYLE)


@dataclass
class History:
    """What :func:`write_history` wrote."""

    markdown: Path
    points: list[HistoryPoint]
    flags: list[Flag]
    figures: list[Path] = field(default_factory=list)
    html: Path | None = None

    @property
    def flagged(self) -> int:
        """How many regressions the gate would report over the whole history."""
        return sum(1 for f in self.flags if f.kind == "regression")


# ----------------------------------------------------------------------------------------------
# Input
# ----------------------------------------------------------------------------------------------


def _holds_leaderboard(folder: Path) -> bool:
    return (folder / RESULTS_FILE).is_file() or (folder / LEADERBOARD_FILE).is_file()


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _created(manifest: Mapping[str, Any]) -> str | None:
    value = manifest.get("created") or manifest.get("started")
    return str(value) if value else None


def discover_history(parent: str | Path) -> list[Path]:
    """The subfolders of ``parent`` holding a leaderboard, oldest first (by the manifests'
    creation time, then by name); at least two."""
    parent = Path(parent)
    if not parent.is_dir():
        raise UsageError(f"--history {parent}: not a folder")
    found = [p for p in sorted(parent.iterdir()) if p.is_dir() and _holds_leaderboard(p)]
    if len(found) < 2:
        raise UsageError(
            f"--history {parent}: {len(found)} subfolder(s) with {RESULTS_FILE} or "
            f"{LEADERBOARD_FILE}; a history needs at least 2"
        )
    return sorted(found, key=lambda p: (_created(_manifest(p)) or "", p.name))


def load_points(folders: Sequence[str | Path]) -> list[HistoryPoint]:
    """Every folder's leaderboard and provenance, in the order given."""
    if len(folders) < 2:
        raise UsageError("a history needs at least 2 results folders")
    points = []
    for folder in map(Path, folders):
        frame, manifest = load_leaderboard_frame(folder)
        manifest = manifest or {}
        commit = manifest.get("commit") if isinstance(manifest.get("commit"), str) else None
        label = commit[:COMMIT_CHARS] if commit else folder.name
        points.append(HistoryPoint(folder, label, commit, _created(manifest), frame))
    labels = [p.label for p in points]
    for p in points:  # the same commit run twice: tell the runs apart by folder
        if labels.count(p.label) > 1:
            p.label = f"{p.label}\n{p.path.name}"
    return points


# ----------------------------------------------------------------------------------------------
# The gate between consecutive folders
# ----------------------------------------------------------------------------------------------


def gate_flags(
    folders: Sequence[str | Path], thresholds: Thresholds | None = None, z: float = DEFAULT_Z
) -> tuple[list[Flag], list[Comparison]]:
    """What ``ldpbench compare PREVIOUS CURRENT`` flags for every consecutive pair of folders."""
    rows = [load_leaderboard(f, "results") for f in folders]
    flags, comparisons = [], []
    for i in range(1, len(rows)):
        result = compare(
            rows[i - 1], rows[i], thresholds, z, baseline_name=str(folders[i - 1]), current_name=str(folders[i])
        )
        comparisons.append(result)
        for change in result.changes:
            if result.fails_gate(change):
                flags.append(Flag(i, change, "regression"))
            elif change.status in ("better", "fixed"):
                flags.append(Flag(i, change, "better"))
    return flags, comparisons


def _flag_key(key: Sequence[Any]) -> tuple[Any, ...]:
    # compare's row key has epsilon as a float (NaN for personalized); NaN != NaN in a dict key.
    return tuple(None if isinstance(v, float) and math.isnan(v) else v for v in key)


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------


def history_frame(points: Sequence[HistoryPoint], flags: Sequence[Flag]) -> pl.DataFrame:
    """Every point's leaderboard stacked, with ``_x`` = its position and ``flag`` = the gate's mark."""
    marks: dict[tuple[int, tuple[Any, ...]], str] = {}
    for f in flags:
        key = (f.index, _flag_key(f.change.key))
        if marks.get(key) != "regression":  # a regression outranks anything else on the same point
            marks[key] = f.kind
    frames = []
    for i, point in enumerate(points):
        frame = point.frame.with_columns(_x=pl.lit(float(i)))
        keys = frame.select("dataset", "users", "epsilon", "oracle", "pipeline", "metric").iter_rows()
        frame = frame.with_columns(flag=pl.Series([marks.get((i, _flag_key(k))) for k in keys], dtype=pl.String))
        frames.append(frame)
    return pl.concat(frames, how="vertical_relaxed")


def _point_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["_x"], *row_key(row))


def plot_history(
    stacked: pl.DataFrame,
    points: Sequence[HistoryPoint],
    out: Path,
    facet: Sequence[str] = DEFAULT_FACET,
    max_lines: int = MAX_LINES,
) -> list[Path]:
    """One figure per (metric, users): panels per facet x epsilon, x = the folders."""
    figures: list[Path] = []
    used: set[str] = set()
    values = {(float(i), *key): v for i, p in enumerate(points) for key, v in aggregate_values(p.frame).items()}
    panel_facet = [*facet, "epsilon"]
    lines = [c for c in FACET_COLUMNS if c not in facet]
    xticks = (list(range(len(points))), [p.label for p in points])
    for (metric, users), sub in stacked.group_by(["metric", "users"], maintain_order=True):
        name = slug("history-" + metric + (f"-users-{users}" if users else ""))
        while name in used:
            name += "_"
        used.add(name)
        # Identical series (power = calibrate) are drawn once, judged on every folder's aggregates.
        panels, order = build_panels(sub, panel_facet, lines, "_x", values, max_lines, key_of=_point_key)
        gib = sub["greater_is_better"].drop_nulls()
        direction = "" if gib.is_empty() else (" (higher is better)" if gib[0] else " (lower is better)")
        heading = metric + (f" · users {users}" if users else "")
        title = (
            f"{heading} across {len(points)} results — mean, bars: {CONFIDENCE:.0%} CI; marks: what "
            "`ldpbench compare` flags against the previous one; identical series (same aggregates) drawn once"
        )
        drawn = draw_panels(panels, order, out / f"{name}.png", title, metric + direction, "results (commit)", xticks)
        figures += [d.path for d in drawn]
    return figures


# ----------------------------------------------------------------------------------------------
# Markdown and HTML
# ----------------------------------------------------------------------------------------------


def _flag_cells(flag: Flag, points: Sequence[HistoryPoint]) -> list[str]:
    c = flag.change
    dataset, users, epsilon, oracle, pipeline, metric = c.key
    before = format_number(c.baseline["mean"]) if c.baseline else "—"
    after = format_number(c.current["mean"]) if c.current else "—"
    rel = f" ({c.relative:+.1%})" if math.isfinite(c.relative) else ""
    step = f"{points[flag.index - 1].label} → {points[flag.index].label}".replace("\n", " ")
    return [
        step,
        str(dataset),
        str(users or ""),
        format_epsilon(epsilon).removeprefix("ε="),
        str(oracle),
        str(pipeline),
        str(metric),
        f"{c.mark.strip()} {c.status}".strip(),
        f"{before} → {after}{rel}",
        c.reason,
    ]


_FLAG_HEADERS = ["from → to", "dataset", "users", "ε", "oracle", "pipeline", "metric", "status", "mean", "reason"]


def _markdown(
    points: Sequence[HistoryPoint], flags: Sequence[Flag], figures: Sequence[Path], thresholds: Thresholds, z: float
) -> str:
    lines = [f"# ldpbench history: {len(points)} results\n", "| # | commit | results | created |", "|---|---|---|---|"]
    for i, p in enumerate(points):
        lines.append(f"| {i} | `{(p.commit or 'unknown')[:12]}` | `{p.path}` | {p.created or '?'} |")
    regressions = [f for f in flags if f.kind == "regression"]
    lines += [
        "",
        f"Between consecutive results, the CI gate (`ldpbench compare`, threshold {thresholds}, "
        f"{z:g}σ noise) flags {len(regressions)} regression(s) and {len(flags) - len(regressions)} "
        f"improvement(s); written {time.strftime('%Y-%m-%d %H:%M:%S %z')}.\n",
    ]
    if flags:
        lines += ["## Flagged changes\n", "| " + " | ".join(_FLAG_HEADERS) + " |", "|" + "---|" * len(_FLAG_HEADERS)]
        for f in sorted(flags, key=lambda f: (f.kind != "regression", f.index)):
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in _flag_cells(f, points)) + " |")
        lines.append("")
    lines.append("## Figures\n")
    lines += [f"![{p.stem}]({p.name})\n" for p in figures]
    return "\n".join(lines).rstrip("\n") + "\n"


def _html(
    points: Sequence[HistoryPoint], flags: Sequence[Flag], figures: Sequence[Path], markdown: str, out: Path
) -> Path:
    from ldpbench.report.html import _SCRIPT, _STYLE, HTML_FILE, data_uri

    def table(headers: list[str], rows: list[list[str]], table_id: str) -> str:
        head = "".join(f'<th class="t">{html.escape(h)}</th>' for h in headers)
        body = "".join(
            "<tr>"
            + "".join(f'<td class="t" data-v="{html.escape(c, quote=True)}">{html.escape(c)}</td>' for c in r)
            + "</tr>"
            for r in rows
        )
        box = f'<input class="filter" data-table="{table_id}" placeholder="filter rows…" size="40">'
        return f'{box}<table class="lb" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    title = f"ldpbench history: {len(points)} results"
    summary = next(line for line in markdown.splitlines() if line.startswith("Between consecutive"))
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        table(
            ["#", "commit", "results", "created"],
            [[str(i), (p.commit or "unknown")[:12], str(p.path), p.created or "?"] for i, p in enumerate(points)],
            "points",
        ),
        f"<p>{html.escape(summary.strip('_'))}</p>",
        "<h2>Flagged changes</h2>",
    ]
    ordered = sorted(flags, key=lambda f: (f.kind != "regression", f.index))
    parts.append(
        table(_FLAG_HEADERS, [_flag_cells(f, points) for f in ordered], "flags") if flags else "<p>Nothing flagged.</p>"
    )
    parts.append("<h2>Figures</h2>")
    parts += [f'<figure><img alt="{html.escape(p.stem)}" src="{data_uri(p)}"></figure>' for p in figures]
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    path = out / HTML_FILE
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def write_history(
    folders: Sequence[str | Path],
    out_dir: str | Path | None = None,
    html: bool = False,
    facet: Sequence[str] = DEFAULT_FACET,
    only: Mapping[str, Sequence[str]] | None = None,
    max_lines: int = MAX_LINES,
    thresholds: Thresholds | None = None,
    z: float = DEFAULT_Z,
) -> History:
    """Write ``history.md`` (and ``report.html``) and the history figures for ``folders``, oldest
    first, into ``out_dir`` (default: ``<last folder>/report-history``)."""
    thresholds = thresholds or Thresholds()
    points = load_points(folders)
    flags, _ = gate_flags([p.path for p in points], thresholds, z)
    last = points[-1].path
    out = Path(out_dir) if out_dir is not None else (last if last.is_dir() else last.parent) / "report-history"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc}") from None
    only = only or {}
    stacked = apply_only(history_frame(points, flags), only)
    flags = [f for f in flags if all(f.change.key[GROUP_COLUMNS.index(c)] in wanted for c, wanted in only.items())]
    figures = plot_history(stacked, points, out, facet, max_lines)
    markdown = _markdown(points, flags, figures, thresholds, z)
    history = History(out / HISTORY_FILE, points, flags, figures)
    history.markdown.write_text(markdown, encoding="utf-8")
    if html:
        history.html = _html(points, flags, figures, markdown, out)
    return history
