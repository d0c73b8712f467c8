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

from ldpbench.errors import UsageError
from ldpbench.stats.paired import DEFAULT_ALPHA, holm

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
        from ldpbench.util.suggest import closest

        near = closest(metric, metrics) or closest(metric, [m.split("(", 1)[0] for m in metrics])
        hint = f"; did you mean '{near}'?" if near else ""
        raise UsageError(f"no metric '{metric}' in this leaderboard (it has {', '.join(metrics)}){hint}")
    sub = lb.filter(pl.col("metric") == metric).with_columns(
        method=pl.col("oracle") + " · " + pl.col("pipeline"),
        block=pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in BLOCK_COLUMNS], separator="|"),
    )
    methods = list(dict.fromkeys(sub["method"].to_list()))
    wide = sub.pivot(on="method", index="block", values="mean", aggregate_function="first")
    values = wide.select(methods).to_numpy().astype(float)
    values = values[np.all(np.isfinite(values), axis=1)]
    methods, values = merge_identical_methods(methods, values)
    n, k = values.shape
    if n < 2 or k < 2:
        raise UsageError(
            f"ranking needs at least 2 methods in at least 2 complete cells (metric '{metric}': {k} methods, {n} cells)"
        )
    declared = sub["greater_is_better"].drop_nulls()  # Series.first() is polars >= 1.10
    gib = bool(declared[0]) if len(declared) else False
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
    return GridRanks(
        metric, methods, avg, n, float(stat), p, cd, [(a, b, float(pv)) for (a, b), pv in zip(pairs, adjusted)], alpha
    )


def merge_identical_methods(methods: list[str], values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Methods whose value is the same in every cell (relative 1e-9) become one, named together
    ("oue · power = oue · calibrate"): duplicates would tie with each other, crowd the diagram and
    inflate the Friedman test's number of methods, as the report's figures draw them once too."""
    if values.shape[0] == 0:
        return methods, values
    keep: list[int] = []
    names: dict[int, list[str]] = {}
    for j in range(values.shape[1]):
        twin = next((i for i in keep if np.allclose(values[:, i], values[:, j], rtol=1e-9, atol=0.0)), None)
        if twin is None:
            keep.append(j)
            names[j] = [methods[j]]
        else:
            names[twin].append(methods[j])
    return [" = ".join(names[j]) for j in keep], values[:, keep]


def smallest_pairwise_p(blocks: int, pairs: int) -> float:
    """The smallest Holm-adjusted p a pair can reach over ``blocks`` cells.

    With N non-zero differences the two-sided Wilcoxon p is at least 2 / 2^N when exact (every
    difference of one sign) and at least ``erfc(z / sqrt 2)``, ``z = sqrt(1.5 N (N + 1) / (2N + 1))``,
    when SciPy takes the normal approximation (ties or zeros); Holm multiplies the smallest p by
    the number of pairs.
    """
    if blocks < 1:
        return 1.0
    z = math.sqrt(1.5 * blocks * (blocks + 1) / (2 * blocks + 1))
    return min(1.0, pairs * min(2.0 ** (1 - blocks), math.erfc(z / math.sqrt(2))))


def min_blocks(pairs: int, alpha: float) -> int:
    """Fewest cells with which some pair of methods can differ at ``alpha`` (Holm over ``pairs``):
    the smallest N with ``pairs * 2 / 2^N < alpha`` (13 for 105 pairs at 0.05)."""
    n = 1
    while smallest_pairwise_p(n, max(pairs, 1)) >= alpha:
        n += 1
    return n


def format_ranks(result: GridRanks) -> str:
    """Plain-text summary: average ranks, Friedman, CD, significant pairs."""
    order = np.argsort(result.average_rank, kind="stable")
    lines = [f"Average rank over {result.cells} cells, metric {result.metric} (1 = best):", ""]
    lines += [f"  {result.average_rank[i]:6.2f}  {result.methods[i]}" for i in order]
    lines += [
        "",
        f"Friedman chi2 = {result.friedman_statistic:.4g}, p = {result.friedman_p:.3g} "
        f"({len(result.methods) - 1} d.f.); Nemenyi critical difference at alpha {result.alpha:g}: "
        f"{result.critical_difference:.3g}",
    ]
    differ = [(a, b, p) for a, b, p in result.pairwise if p < result.alpha]
    pairs = len(result.pairwise)
    if smallest_pairwise_p(result.cells, pairs) >= result.alpha:
        lines.append(
            f"Pairwise Wilcoxon (Holm over {pairs} pairs): {result.cells} blocks cannot show a difference at alpha "
            f"{result.alpha:g}; at least {min_blocks(pairs, result.alpha)} are needed"
        )
    else:
        lines.append(f"Pairwise Wilcoxon (Holm): {len(differ)} of {pairs} pairs differ at alpha {result.alpha:g}")
    lines += [f"  {a}  vs  {b}: p = {p:.3g}" for a, b, p in differ[:50]]
    return "\n".join(lines) + "\n"


#: Most methods a CD diagram names; beyond it the best ones are drawn and a note counts the rest
#: (every rank stays in :func:`format_ranks`). 44 names on one axis overlap and their bars blur.
CD_MAX_METHODS = 20


def _cliques(sorted_ranks: list[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs of consecutive methods (by rank) within ``cd`` of each other."""
    cliques: list[tuple[int, int]] = []
    for a in range(len(sorted_ranks)):
        b = a
        while b + 1 < len(sorted_ranks) and sorted_ranks[b + 1] - sorted_ranks[a] < cd:
            b += 1
        if b > a and not any(a >= s and b <= e for s, e in cliques):
            cliques.append((a, b))
    return cliques


@dataclass
class CDLayout:
    """What a CD diagram shows: :func:`cd_layout`."""

    shown: list[int]  # indices into result.methods, best first
    axis_end: int  # the rank axis runs from 1 to here
    cliques: list[tuple[int, int]]  # (first, last) positions in ``shown`` joined by a bar
    note: str  # how many methods are left out, or ""


def cd_layout(result: GridRanks, max_methods: int = CD_MAX_METHODS) -> CDLayout:
    """The best ``max_methods`` methods by average rank, the axis cut one rank past the last of
    them (the whole 1..k with every method shown), and the bars among them."""
    k = len(result.methods)
    order = [int(i) for i in np.argsort(result.average_rank, kind="stable")]
    shown = order[: max(1, max_methods)]
    sorted_ranks = [float(result.average_rank[i]) for i in shown]
    end = k if len(shown) == k else min(k, math.ceil(sorted_ranks[-1]) + 1)
    note = ""
    if len(shown) < k:
        rest = [float(result.average_rank[i]) for i in order[len(shown) :]]
        note = (
            f"best {len(shown)} of {k} methods by average rank; {k - len(shown)} more (ranks "
            f"{min(rest):.2f}–{max(rest):.2f}) are not drawn: every rank is in the rank table"
        )
    return CDLayout(shown, end, _cliques(sorted_ranks, result.critical_difference), note)


def plot_cd(result: GridRanks, path: Path, max_methods: int = CD_MAX_METHODS) -> Path:
    """The critical-difference diagram (Demšar 2006, Fig. 1): an axis of average ranks, each
    method's name at its rank, bars joining groups whose ranks differ by less than the CD.

    With more than ``max_methods`` methods only the best ``max_methods`` (by average rank) are
    named, on an axis cut after them, and the figure says how many more there are; their ranks
    are unchanged (computed over all methods)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    layout = cd_layout(result, max_methods)
    k, shown, high, cliques = len(result.methods), layout.shown, layout.axis_end, layout.cliques
    m = len(shown)
    ranks = result.average_rank
    sorted_ranks = [float(ranks[i]) for i in shown]
    cd = result.critical_difference
    step = 1 if high <= 20 else 5
    half = math.ceil(m / 2)
    bar_gap = 0.22
    names_top = -(0.5 + bar_gap * len(cliques))
    bottom = names_top - half - 0.8
    fig = Figure(figsize=(11, 1.1 + 0.3 * (half + 2 + bar_gap * len(cliques))))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.96))
    span = high - 1 or 1
    margin = 0.45 * span + 0.5  # room for the names, left and right of the rank axis
    ax.set_xlim(1 - margin, high + margin)
    ax.set_ylim(bottom, 1.7)
    ax.axis("off")
    top = 0.0
    ax.hlines(top, 1, high, color="black", linewidth=1)
    for r in range(1, high + 1):
        labelled = r == 1 or r % step == 0 or r == high
        ax.vlines(r, top, top + (0.15 if labelled else 0.08), color="black", linewidth=1)
        if labelled:
            ax.text(r, top + 0.25, str(r), ha="center", va="bottom", fontsize=8)
    ax.hlines(top + 1.1, 1, min(1 + cd, high), color="black", linewidth=2)
    if cd >= k - 1:  # no two of all k average ranks can differ by more
        cd_text = f"CD = {cd:.2f} (wider than any rank difference: no pair differs by the Nemenyi test)"
    else:
        cd_text = f"CD = {cd:.2f}" + (" (cut at the axis)" if 1 + cd > high else "")
    ax.text(1 + min(cd, span) / 2, top + 1.2, cd_text, ha="center", va="bottom", fontsize=8)
    for pos, i in enumerate(shown):
        left = pos < half
        y = names_top - (pos if left else m - 1 - pos)
        x_text = 1 - 0.1 * span if left else high + 0.1 * span
        ax.plot([ranks[i], ranks[i], x_text], [top, y, y], color="black", linewidth=0.7)
        ax.text(
            x_text - 0.01 * span if left else x_text + 0.01 * span,
            y,
            f"{result.methods[i]} ({ranks[i]:.2f})",
            ha="right" if left else "left",
            va="center",
            fontsize=7.5,
        )
    for level, (a, b) in enumerate(cliques):
        y = top - 0.3 - bar_gap * level
        ax.hlines(y, sorted_ranks[a] - 0.03, sorted_ranks[b] + 0.03, color="black", linewidth=2)
    if layout.note:
        ax.text(1 - margin * 0.98, bottom + 0.2, layout.note, ha="left", va="bottom", fontsize=8, style="italic")
    fig.savefig(path, dpi=120)
    return path
