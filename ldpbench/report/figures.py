"""Readable figures for any leaderboard: facets, at most a dozen lines a panel, one legend.

A CI leaderboard has 48 oracle · pipeline series per metric; drawn in one panel they are a tangle
with a 62-entry legend. :func:`plot_metric` instead

- makes one panel per value of the **facet** columns, the remaining columns naming the lines (by
  default dataset x whichever of oracle and pipeline has fewer values, so the more numerous share
  a panel: :func:`choose_facet`; ``--facet dataset,oracle`` draws the pipelines of each oracle,
  ``--facet oracle,dataset`` transposes, ``--facet pipeline`` compares oracles);
- draws series with identical values once, named together ("power = calibrate"), judged from the
  per-repeat values (:mod:`ldpbench.leaderboard.identical`);
- splits a panel that would still hold more than :data:`MAX_LINES` lines into parts, and a figure
  of more than :data:`MAX_PANELS` panels into several files;
- gives every figure one shared legend (a series keeps its colour and marker in every panel),
  error bars (the 95% confidence interval of the mean, the lines of a panel set slightly apart
  around each epsilon so the bars do not hide each other), a linear epsilon axis, and a log y axis
  when the metric spans more than a decade.

:func:`draw_panels` is the drawing half; the history view (:mod:`ldpbench.report.history`) uses it with
folders on the x axis. Matplotlib's object API on the Agg canvas, as in :mod:`ldpbench.report.markdown`.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ldpbench.errors import UsageError
from ldpbench.leaderboard.aggregate import CONFIDENCE
from ldpbench.leaderboard.identical import RowKey, identical_series, row_key
from ldpbench.util.suggest import closest

#: Columns that can make panels; those not used for panels name the lines.
FACET_COLUMNS = ("dataset", "oracle", "pipeline")
#: The history view's panels (:mod:`ldpbench.report.history`); a report chooses per figure
#: (:func:`choose_facet`) unless ``--facet`` says.
DEFAULT_FACET = ("dataset", "oracle")
#: Columns ``--only`` can restrict.
FILTER_COLUMNS = ("dataset", "users", "oracle", "pipeline", "metric")
#: Most lines in one panel: beyond a dozen, colours and markers stop telling lines apart.
MAX_LINES = 12
#: Most panels in one figure file (4 x 4).
MAX_PANELS = 16
#: Most panels side by side.
MAX_COLUMNS = 4
#: Twelve colours that stay apart: tab10 and two darker ones.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000000",
    "#6b3d9a",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
LINESTYLES = ("-", "--", "-.", ":")
#: Marks of the history view (:mod:`ldpbench.report.history`): status -> (marker, colour, legend text).
FLAG_STYLE = {
    "regression": ("X", "#d62728", "gate fails here (worse, failing, missing or not comparable)"),
    "better": ("o", "#2ca02c", "better beyond threshold and noise"),
}


# ----------------------------------------------------------------------------------------------
# Options
# ----------------------------------------------------------------------------------------------


def slug(text: str) -> str:
    """A file-name-safe version of a label: ``set-query(rho=10)`` -> ``set-query_rho_10``. Only
    letters, digits and ``.+-`` are kept: ``=`` (like spaces and brackets) needs quoting in a shell
    and in some URLs, so every figure, CD diagram and history file of a report names it the same
    safe way (``rank``'s default CD file and the report's links alike)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_") or "metric"


def parse_facet(text: str | None) -> tuple[str, ...] | None:
    """``--facet oracle,dataset`` -> ("oracle", "dataset"); ``none`` -> no facets (one panel);
    no ``--facet`` -> None, the report's choice per figure (:func:`choose_facet`)."""
    if text is None:
        return None
    if text.strip().lower() == "none":
        return ()
    names = [t.strip() for t in text.split(",") if t.strip()]
    for name in names:
        if name not in FACET_COLUMNS:
            hint = closest(name, FACET_COLUMNS)
            raise UsageError(
                f"--facet: unknown column '{name}'"
                + (f" (did you mean '{hint}'?)" if hint else "")
                + f"; choose from {', '.join(FACET_COLUMNS)} (or none)"
            )
    if len(set(names)) != len(names):
        raise UsageError(f"--facet names a column twice: {text}")
    if len(names) > 2:
        raise UsageError(f"--facet takes at most two columns (rows, columns of the grid), got {text}")
    return tuple(names)


def choose_facet(lb: pl.DataFrame, max_lines: int = MAX_LINES) -> tuple[str, ...]:
    """The panels of a figure nobody chose them for: the datasets, times whichever of oracle and
    pipeline has fewer values, so that the more numerous — the methods a spec compares — share a
    panel and its axes. A spec comparing a new oracle with the built-ins draws them in one panel;
    one comparing post-processors on a few oracles draws the post-processors together. Ties go
    to the oracles sharing a panel; a column of more than ``max_lines`` values makes the panels
    instead when the other fits in one."""
    count = {c: lb[c].n_unique() for c in ("oracle", "pipeline")}
    lines = "oracle" if count["oracle"] >= count["pipeline"] else "pipeline"
    other = "pipeline" if lines == "oracle" else "oracle"
    if count[lines] > max_lines >= count[other]:
        lines, other = other, lines
    return ("dataset", other)


def parse_only(items: Sequence[str]) -> dict[str, list[str]]:
    """``--only oracle=grr,olh --only metric=mse`` -> {"oracle": ["grr", "olh"], "metric": ["mse"]}."""
    only: dict[str, list[str]] = {}
    for item in items:
        column, sep, values = item.partition("=")
        column = column.strip()
        if not sep or not values.strip():
            raise UsageError(f"--only {item}: expected COLUMN=VALUE[,VALUE...], e.g. oracle=grr,olh")
        if column not in FILTER_COLUMNS:
            hint = closest(column, FILTER_COLUMNS)
            raise UsageError(
                f"--only {item}: unknown column '{column}'"
                + (f" (did you mean '{hint}'?)" if hint else "")
                + f"; choose from {', '.join(FILTER_COLUMNS)}"
            )
        only.setdefault(column, []).extend(split_values(values))
    return only


def split_values(text: str) -> list[str]:
    """``grr,olh`` -> [grr, olh]; a comma inside parentheses belongs to the value, since labels
    carry parameters: ``zipf(d=64,n=20000,s=1.3),retail`` -> [zipf(d=64,n=20000,s=1.3), retail]."""
    values, depth, current = [], 0, []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            values.append("".join(current))
            current = []
        else:
            current.append(char)
    values.append("".join(current))
    return [v.strip() for v in values if v.strip()]


def apply_only(lb: pl.DataFrame, only: Mapping[str, Sequence[str]]) -> pl.DataFrame:
    """Keep the rows whose columns take one of the given values; an absent value is an error
    (a typo would otherwise silently empty the report)."""
    for column, wanted in only.items():
        present = list(dict.fromkeys(lb[column].to_list()))
        for value in wanted:
            if value not in present:
                hint = closest(value, present)
                raise UsageError(
                    f"--only {column}={value}: no such {column} in these results"
                    + (f" (did you mean '{hint}'?)" if hint else "")
                    + f"; it has {', '.join(map(str, present[:20]))}"
                    + (" ..." if len(present) > 20 else "")
                )
        lb = lb.filter(pl.col(column).is_in(list(wanted)))
    return lb


# ----------------------------------------------------------------------------------------------
# Planning: which lines go in which panel
# ----------------------------------------------------------------------------------------------


@dataclass
class Series:
    """One drawn line: the series it stands for (several when their values are identical)."""

    names: list[str]
    x: list[float]
    y: list[float]
    low: list[float]  # error bar below / above the point (0 where unknown)
    high: list[float]
    flags: list[tuple[float, float, str]] = field(default_factory=list)  # (x, y, FLAG_STYLE key)

    @property
    def label(self) -> str:
        return " = ".join(self.names)


@dataclass
class Panel:
    title: str
    series: list[Series]


@dataclass
class Drawn:
    """One figure file and what a reader sees in it."""

    path: Path
    panels: int
    legend: list[str]  # the shared legend's entries
    log_y: bool


def _line_name(row: Mapping[str, Any], lines: Sequence[str]) -> str:
    return " · ".join(_text(row[c]) for c in lines) or "all"


def _text(value: Any) -> str:
    if isinstance(value, float):
        return "∞" if math.isinf(value) else ("personalized" if math.isnan(value) else f"ε={value:g}")
    return str(value)


def _bars(mean: float, lo: float, hi: float) -> tuple[float, float]:
    return (mean - lo if math.isfinite(lo) else 0.0, hi - mean if math.isfinite(hi) else 0.0)


def build_panels(
    frame: pl.DataFrame,
    facet: Sequence[str],
    lines: Sequence[str],
    x: str,
    values: Mapping[Hashable, np.ndarray] | None = None,
    max_lines: int = MAX_LINES,
    key_of: Callable[[Mapping[str, Any]], Hashable] = row_key,
) -> tuple[list[Panel], list[str]]:
    """Panels of series from leaderboard-like rows.

    :param frame: rows with the ``facet`` and ``lines`` columns, a float ``x`` column (position on
        the x axis), ``mean``, ``ci_low``, ``ci_high`` and optionally ``flag`` (a FLAG_STYLE key or
        null); with ``values`` also the leaderboard's group columns.
    :param values: per-repeat values by ``key_of(row)`` (default: the row key); series identical
        in them are drawn once.
    :returns: the panels, and every line name in first-appearance order (for stable styles).
    """
    if max_lines < 1:
        raise UsageError(f"at most {max_lines} lines per panel: need at least 1")
    order = list(dict.fromkeys(_line_name(r, lines) for r in frame.select(*lines).iter_rows(named=True)))
    panels: list[Panel] = []
    groups = frame.group_by(list(facet), maintain_order=True) if facet else [((), frame)]
    for keys, sub in groups:
        title = " · ".join(_text(k) for k in keys)
        points: dict[str, list[dict[str, Any]]] = {}
        for r in sub.sort(x, maintain_order=True).iter_rows(named=True):
            if not math.isfinite(r[x]) or not math.isfinite(r["mean"]):
                continue  # a failed row has no point; its failures are listed in the report
            points.setdefault(_line_name(r, lines), []).append(r)
        if values is not None:
            merged = identical_series(
                {name: [(r[x], key_of(r)) for r in rows] for name, rows in points.items()}, values
            )
        else:
            merged = [[name] for name in points]
        series = []
        for names in merged:
            rows = points[names[0]]
            bars = [_bars(r["mean"], r["ci_low"], r["ci_high"]) for r in rows]
            flags = [(r[x], r["mean"], r["flag"]) for r in rows if r.get("flag")]
            series.append(
                Series(
                    list(names),
                    [r[x] for r in rows],
                    [r["mean"] for r in rows],
                    [b[0] for b in bars],
                    [b[1] for b in bars],
                    flags,
                )
            )
        parts = max(1, math.ceil(len(series) / max_lines))
        size = math.ceil(len(series) / parts) if series else 0  # balanced parts, not 12 + 1
        for p in range(parts):
            part = f" (part {p + 1} of {parts})" if parts > 1 else ""
            panels.append(Panel(title + part, series[p * size : (p + 1) * size]))
    return panels, order


# ----------------------------------------------------------------------------------------------
# Drawing
# ----------------------------------------------------------------------------------------------


def style_of(index: int) -> dict[str, Any]:
    """Colour, marker and line style of the ``index``-th line name of a figure."""
    return {
        "color": PALETTE[index % len(PALETTE)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)],
    }


def use_log_scale(values: Sequence[float]) -> bool:
    """Log scale when every value is positive and they span more than a decade."""
    good = [v for v in values if math.isfinite(v)]
    return bool(good) and min(good) > 0 and max(good) / min(good) > 10


def _wrap(label: str, width: int = 34) -> str:
    return "\n".join(textwrap.wrap(label, width, break_long_words=False, break_on_hyphens=False)) or label


def draw_panels(
    panels: Sequence[Panel],
    order: Sequence[str],
    path: Path,
    title: str,
    ylabel: str,
    xlabel: str,
    xticks: tuple[Sequence[float], Sequence[str]] | None = None,
    columns: int | None = None,
    bars: bool = False,
) -> list[Drawn]:
    """Draw panels into ``path`` (and ``path-2.png``, ... beyond :data:`MAX_PANELS` panels).

    :param order: every line name of the figure; a line's style follows its first name's index.
    :param xticks: (positions, labels) of the x axis; default: matplotlib's.
    :param columns: panels per row (default: up to :data:`MAX_COLUMNS`).
    :param bars: one bar per series instead of lines (personalized budgets have no x axis).
    :returns: every file written, with its legend and y scale.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    index = {name: i for i, name in enumerate(order)}
    all_y = [y for p in panels for s in p.series for y in s.y]
    log_y = use_log_scale(all_y)
    chunks = [panels[i : i + MAX_PANELS] for i in range(0, len(panels), MAX_PANELS)] or [[]]
    drawn = []
    for c, chunk in enumerate(chunks):
        ncols = max(1, min(columns or MAX_COLUMNS, MAX_COLUMNS, len(chunk) or 1))
        nrows = max(1, math.ceil(len(chunk) / ncols))
        handles: dict[str, Any] = {}
        labels_in = [s.label for p in chunk for s in p.series]
        legend_rows = len(dict.fromkeys(labels_in)) + 2
        fig = Figure(
            figsize=(3.9 * ncols + 3.0, max(3.2 * nrows + 0.6, 0.24 * legend_rows + 1.0)), layout="constrained"
        )
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for k, panel in enumerate(chunk):
            ax = axes[k // ncols][k % ncols]
            ax.set_title(_wrap(panel.title, 48), fontsize=8.5)
            ax.grid(True, which="major", alpha=0.3)
            if bars:
                _draw_bars(ax, panel, index, handles)
            else:
                _draw_lines(ax, panel, index, handles)
                if xticks is not None:  # the panel's own points: another panel may have other budgets
                    used = {x for s in panel.series for x in s.x}
                    ticks = [(p, t) for p, t in zip(*xticks) if p in used] or list(zip(*xticks))
                    ax.set_xticks([p for p, _ in ticks], [t for _, t in ticks], fontsize=7.5)
                ax.set_xlabel(xlabel, fontsize=8.5)
            if log_y:
                ax.set_yscale("log")
            ax.set_ylabel(ylabel, fontsize=8)
            ax.tick_params(labelsize=7.5)
        for k in range(len(chunk), nrows * ncols):
            axes[k // ncols][k % ncols].set_visible(False)
        for flag, (marker, colour, text) in FLAG_STYLE.items():
            if any(f[2] == flag for p in chunk for s in p.series for f in s.flags):
                handles[text] = Line2D(
                    [], [], linestyle="", marker=marker, markersize=9, color=colour, markeredgecolor="black"
                )
        part = f" ({c + 1} of {len(chunks)})" if len(chunks) > 1 else ""
        fig.suptitle(title + part, fontsize=9.5, x=0.01, ha="left")
        if handles:
            fig.legend(
                list(handles.values()),
                [_wrap(t) for t in handles],
                loc="outside right upper",
                fontsize=7.5,
                frameon=False,
            )
        target = path if c == 0 else path.with_name(f"{path.stem}-{c + 1}{path.suffix}")
        fig.savefig(target, dpi=110)
        drawn.append(Drawn(target, len(chunk), list(handles), log_y))
    return drawn


#: Lines of a panel are spread over this fraction of its x range around each point, so that error
#: bars at the same epsilon stand side by side instead of on top of each other.
DODGE = 0.04


def _draw_lines(ax: Any, panel: Panel, index: Mapping[str, int], handles: dict[str, Any]) -> None:
    xs = [x for s in panel.series for x in s.x]
    spread = DODGE * (max(xs) - min(xs)) if len(panel.series) > 1 and xs else 0.0
    n = len(panel.series)
    for j, s in enumerate(panel.series):
        shift = spread * (j / (n - 1) - 0.5) if n > 1 else 0.0
        line = ax.errorbar(
            [x + shift for x in s.x],
            s.y,
            yerr=[s.low, s.high],
            capsize=2,
            markersize=4,
            linewidth=1.2,
            **style_of(index[s.names[0]]),
        )
        handles.setdefault(s.label, line)
        for fx, fy, flag in s.flags:
            marker, colour, _ = FLAG_STYLE[flag]
            ax.plot(
                [fx + shift],
                [fy],
                linestyle="",
                marker=marker,
                markersize=10,
                color=colour,
                markeredgecolor="black",
                zorder=5,
            )


def _draw_bars(ax: Any, panel: Panel, index: Mapping[str, int], handles: dict[str, Any]) -> None:
    xs = list(range(len(panel.series)))
    heights = [s.y[0] if s.y else 0.0 for s in panel.series]
    errs = [[s.low[0] if s.low else 0.0 for s in panel.series], [s.high[0] if s.high else 0.0 for s in panel.series]]
    colours = [style_of(index[s.names[0]])["color"] for s in panel.series]
    drawn = ax.bar(xs, heights, yerr=errs, color=colours, capsize=2)
    ax.set_xticks(xs, [_wrap(s.label, 20) for s in panel.series], rotation=60, ha="right", fontsize=7)
    for s, patch in zip(panel.series, drawn.patches):
        handles.setdefault(s.label, patch)


# ----------------------------------------------------------------------------------------------
# The report's metric-vs-epsilon figure
# ----------------------------------------------------------------------------------------------


def epsilon_positions(epsilons: Sequence[float]) -> dict[float, float]:
    """x position of each epsilon on a linear axis: itself, and ``inf`` one step right of the
    largest finite budget (a step = the mean gap between the finite ones, or 1)."""
    finite = sorted(e for e in epsilons if math.isfinite(e))
    step = (finite[-1] - finite[0]) / (len(finite) - 1) if len(finite) > 1 else 1.0
    top = finite[-1] if finite else 0.0
    return {e: (e if math.isfinite(e) else top + step) for e in epsilons}


@dataclass
class MetricFigure:
    """What :func:`plot_metric` drew."""

    drawn: list[Drawn]
    merged: list[tuple[str, str]]  # (panel title, "power = calibrate") for every series drawn once
    panels: list[Panel]

    @property
    def paths(self) -> list[Path]:
        return [d.path for d in self.drawn]


@dataclass
class MetricPlan:
    """What :func:`plan_metric` decided: the panels, their lines, and how to draw them."""

    panels: list[Panel]
    order: list[str]
    title: str
    ylabel: str
    xticks: tuple[list[float], list[str]] | None
    columns: int | None
    bars: bool

    @property
    def merged(self) -> list[tuple[str, str]]:
        """(panel title, "power = calibrate") for every series drawn once for several."""
        return [(p.title, s.label) for p in self.panels for s in p.series if len(s.names) > 1]


def plan_metric(
    lb: pl.DataFrame,
    metric: str,
    users: str,
    facet: Sequence[str] | None = None,
    values: Mapping[RowKey, np.ndarray] | None = None,
    evidence: str = "",
    max_lines: int = MAX_LINES,
) -> MetricPlan:
    """The panels of one (metric, users) figure: metric vs epsilon, faceted, identical series merged.

    :param values: per-repeat values (:func:`ldpbench.leaderboard.identical.load_repeat_values`) or their
        aggregate stand-in; ``None`` draws every series.
    :param evidence: how identity was judged, for the figure's title ("per-repeat values").
    :param facet: the columns making the panels; None: :func:`choose_facet`.
    """
    facet = choose_facet(lb, max_lines) if facet is None else tuple(facet)
    personalized = bool(users) or lb["epsilon"].is_nan().all()
    lines = [c for c in FACET_COLUMNS if c not in facet]
    if personalized:
        frame = lb.with_columns(_x=pl.lit(0.0))
        xticks = None
    else:
        epsilons = sorted(set(e for e in lb["epsilon"].to_list() if not math.isnan(e)))
        positions = epsilon_positions(epsilons)
        frame = lb.filter(pl.col("epsilon").is_not_nan()).with_columns(
            _x=pl.col("epsilon").replace_strict(positions, default=math.nan, return_dtype=pl.Float64)
        )
        xticks = ([positions[e] for e in epsilons], ["∞" if math.isinf(e) else f"{e:g}" for e in epsilons])
    panels, order = build_panels(frame, facet, lines, "_x", values, max_lines)
    gib = lb["greater_is_better"].drop_nulls()
    direction = "" if gib.is_empty() else (" (higher is better)" if gib[0] else " (lower is better)")
    heading = metric + (f" · users {users}" if users else "")
    note = f"; identical series drawn once ({evidence})" if evidence else ""
    title = f"{heading} — mean over repeats, bars: {CONFIDENCE:.0%} CI{note}"
    columns = None
    if len(facet) == 2 and not any("(part " in p.title for p in panels):
        columns = len(dict.fromkeys(lb[facet[1]].to_list()))  # a grid: a row per value of the first column
    return MetricPlan(panels, order, title, metric + direction, xticks, columns, personalized)


def plot_metric(
    lb: pl.DataFrame,
    metric: str,
    users: str,
    path: Path,
    facet: Sequence[str] | None = None,
    values: Mapping[RowKey, np.ndarray] | None = None,
    evidence: str = "",
    max_lines: int = MAX_LINES,
) -> MetricFigure:
    """Plan (:func:`plan_metric`) and draw the figure(s) of one (metric, users) into ``path``."""
    plan = plan_metric(lb, metric, users, facet, values, evidence, max_lines)
    drawn = draw_panels(
        plan.panels, plan.order, path, plan.title, plan.ylabel, "ε", plan.xticks, plan.columns, bars=plan.bars
    )
    return MetricFigure(drawn, plan.merged, plan.panels)
