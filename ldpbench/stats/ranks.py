"""Which method wins across a whole grid? Average ranks, Friedman, pairwise Wilcoxon, CD diagram.

Demšar (JMLR 7, 2006) compares k methods over N data sets (here: the N cells of a grid, one per
dataset x users x epsilon for one metric; a method is an oracle · pipeline):

- each cell ranks the methods by their mean (1 = best, ties share the average rank); the
  **average rank** over cells summarizes a method (Demšar §3.2.2);
- the **Friedman test** (Friedman 1937; Demšar Eq. 1) of "all methods have equal average rank":
  chi2_F = 12N / (k(k+1)) * (sum_j R_j^2 - k(k+1)^2/4), k - 1 degrees of freedom. It assumes
  independent cells and a chi-square approximation (N > 10 and k > 5 per Demšar; smaller grids
  give only a rough p-value);
- **pairwise Wilcoxon signed-rank tests** over the cells' means (Demšar §3.1.3; Benavoli et al.,
  JMLR 2016, recommend them over rank-based post-hoc tests), Holm-corrected over the k(k-1)/2 pairs;
- the **critical difference** of the Nemenyi test (Demšar Eq. 4): CD = q_alpha sqrt(k(k+1)/(6N)),
  q_alpha the studentized range quantile / sqrt(2); two methods whose average ranks differ by less
  are not significantly different and are joined by a bar in the CD diagram.

Cells are not independent draws from a population of problems (they share datasets and
oracles), so the p-values describe this grid rather than "all problems".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import UsageError
from .paired import DEFAULT_ALPHA, holm

BLOCK_COLUMNS = ("dataset", "users", "epsilon", "metric")


@dataclass
class GridRanks:
    """The result of :func:`grid_ranks`."""

    metric: str
    methods: list[str]
    average_rank: np.ndarray
    cells: int
    friedman_statistic: float
    friedman_p: float
    critical_difference: float
    pairwise: list[tuple[str, str, float]] = field(default_factory=list)  # (a, b, Holm-adjusted p)
    alpha: float = DEFAULT_ALPHA


def grid_ranks(lb: pl.DataFrame, metric: str | None = None, alpha: float = DEFAULT_ALPHA) -> GridRanks:
    """Rank every oracle · pipeline over the cells of a leaderboard for one metric.

    :param metric: the metric label (default: the first one); methods missing or failed in a cell
        drop that cell (every method must be ranked in every cell used).
    """
    from scipy.stats import chi2, rankdata, studentized_range, wilcoxon

    metrics = list(dict.fromkeys(lb["metric"].to_list()))
    if not metrics:
        raise UsageError("no leaderboard rows to rank")
    metric = metric or metrics[0]
    if metric not in metrics:
        raise UsageError(f"no metric '{metric}' in this leaderboard (it has {', '.join(metrics)})")
    sub = lb.filter(pl.col("metric") == metric).with_columns(
        method=pl.col("oracle") + " · " + pl.col("pipeline"),
        block=pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in BLOCK_COLUMNS], separator="|"),
    )
    methods = list(dict.fromkeys(sub["method"].to_list()))
    wide = sub.pivot(on="method", index="block", values="mean", aggregate_function="first")
    values = wide.select(methods).to_numpy().astype(float)
    values = values[np.all(np.isfinite(values), axis=1)]
    n, k = values.shape
    if n < 2 or k < 2:
        raise UsageError(f"ranking needs at least 2 methods in at least 2 complete cells (metric '{metric}': {k} methods, {n} cells)")
    gib = bool(sub["greater_is_better"].drop_nulls().first())
    ranks = rankdata(-values if gib else values, axis=1)
    avg = ranks.mean(axis=0)
    stat = 12 * n / (k * (k + 1)) * (np.sum(avg**2) - k * (k + 1) ** 2 / 4)
    p = float(chi2.sf(stat, k - 1))
    q = float(studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    cd = q * math.sqrt(k * (k + 1) / (6 * n))
    pairs, raw = [], []
    for i in range(k):
        for j in range(i + 1, k):
            diff = values[:, i] - values[:, j]
            pairs.append((methods[i], methods[j]))
            raw.append(1.0 if not np.any(diff) else float(wilcoxon(diff).pvalue))
    adjusted = holm(raw)
    return GridRanks(metric, methods, avg, n, float(stat), p, cd,
                     [(a, b, float(pv)) for (a, b), pv in zip(pairs, adjusted)], alpha)


def format_ranks(result: GridRanks) -> str:
    """Plain-text summary: average ranks, Friedman, CD, significant pairs."""
    order = np.argsort(result.average_rank, kind="stable")
    lines = [f"Average rank over {result.cells} cells, metric {result.metric} (1 = best):", ""]
    lines += [f"  {result.average_rank[i]:6.2f}  {result.methods[i]}" for i in order]
    lines += ["", f"Friedman chi2 = {result.friedman_statistic:.4g}, p = {result.friedman_p:.3g} "
              f"({len(result.methods) - 1} d.f.); Nemenyi critical difference at alpha {result.alpha:g}: "
              f"{result.critical_difference:.3g}"]
    differ = [(a, b, p) for a, b, p in result.pairwise if p < result.alpha]
    lines.append(f"Pairwise Wilcoxon (Holm): {len(differ)} of {len(result.pairwise)} pairs differ at alpha {result.alpha:g}")
    lines += [f"  {a}  vs  {b}: p = {p:.3g}" for a, b, p in differ[:50]]
    return "\n".join(lines) + "\n"


def plot_cd(result: GridRanks, path: Path) -> Path:
    """The critical-difference diagram (Demšar 2006, Fig. 1): an axis of average ranks, each
    method's name at its rank, bars joining groups whose ranks differ by less than the CD."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    k = len(result.methods)
    order = list(np.argsort(result.average_rank, kind="stable"))
    ranks = result.average_rank
    height = 1.6 + 0.28 * math.ceil(k / 2) + 0.2
    fig = Figure(figsize=(11, height))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.96))
    margin = 0.3 * k + 1  # room for the names, left and right of the rank axis
    ax.set_xlim(1 - margin, k + margin)
    top = 0.0
    ax.set_ylim(-(math.ceil(k / 2) + 2.5), 1.6)
    ax.axis("off")
    ax.hlines(top, 1, k, color="black", linewidth=1)
    for r in range(1, k + 1):
        ax.vlines(r, top, top + 0.15, color="black", linewidth=1)
        ax.text(r, top + 0.25, str(r), ha="center", va="bottom", fontsize=8)
    cd = result.critical_difference
    ax.hlines(top + 1.1, 1, 1 + cd, color="black", linewidth=2)
    ax.text(1 + cd / 2, top + 1.2, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
    half = math.ceil(k / 2)
    for pos, i in enumerate(order):
        left = pos < half
        y = -(pos if left else k - 1 - pos) - 0.8
        x_text = 0.9 if left else k + 0.1
        ax.plot([ranks[i], ranks[i], x_text], [top, y, y], color="black", linewidth=0.7)
        ax.text(x_text - 0.05 if left else x_text + 0.05, y, f"{result.methods[i]} ({ranks[i]:.2f})",
                ha="right" if left else "left",
                va="center", fontsize=7, transform=ax.transData)
    # cliques: maximal runs of consecutive methods (by rank) within CD of each other
    sorted_ranks = [ranks[i] for i in order]
    cliques = []
    for a in range(k):
        b = a
        while b + 1 < k and sorted_ranks[b + 1] - sorted_ranks[a] < cd:
            b += 1
        if b > a and not any(a >= s and b <= e for s, e in cliques):
            cliques.append((a, b))
    for level, (a, b) in enumerate(cliques):
        y = top - 0.25 - 0.12 * level
        ax.hlines(y, sorted_ranks[a] - 0.03, sorted_ranks[b] + 0.03, color="black", linewidth=3)
    fig.savefig(path, dpi=120)
    return path
