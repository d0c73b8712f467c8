"""Report sections on statistics: theory vs measurement, the uniform baseline, ranks across the grid.

Small functions returning Markdown lines, called by :func:`ldpbench.report.markdown.write_report`.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ldpbench.errors import UsageError
from ldpbench.leaderboard.render import format_epsilon, format_number
from ldpbench.util.polars_compat import join_matching_nulls

#: The post-processor whose output is DPBench's trivial baseline (1/d everywhere).
BASELINE_PIPELINE = "uniform"


def theory_section(lb: pl.DataFrame) -> list[str]:
    """measured / theory for every row that has a theory (the unprocessed estimate)."""
    if "theory" not in lb.columns:
        return []
    rows = lb.filter(pl.col("theory").is_not_nan() & pl.col("theory").is_not_null() & pl.col("mean").is_not_nan())
    if rows.is_empty():
        return []
    from ldpbench.leaderboard.theory import far_from_theory

    lines = [
        "## Theory beside measurement\n",
        "Unprocessed estimates: the mean over repeats against the metric's expected value from the "
        "oracle's own variance formula. A ratio far from 1 (flagged ⚠) points at a wrong oracle.\n",
        "| dataset | ε | oracle | pipeline | metric | measured | theory | measured/theory |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows.iter_rows(named=True):
        ratio = r["mean"] / r["theory"]
        flag = " ⚠" if far_from_theory(r["mean"], r["stderr"], r["theory"]) else ""
        lines.append(
            f"| {r['dataset']} | {format_epsilon(r['epsilon']).removeprefix('ε=')} | {r['oracle']} | "
            f"{r['pipeline']} | {r['metric']} | {format_number(r['mean'])} | {format_number(r['theory'])} | "
            f"{ratio:.3f}{flag} |"
        )
    return lines + [""]


def warnings_section(lb: pl.DataFrame) -> list[str]:
    """Every row whose plugins left a warning, named, with how many of its rows carry it."""
    from ldpbench.leaderboard.notes import noted_rows

    noted = noted_rows(lb)
    if not noted:
        return []
    lines = [
        "## Warnings\n",
        "What the plugins said about their own results (an iteration cap hit, a prior fit clamped), "
        "per row. The numbers of these rows are what the plugin returned; read them with the warning.\n",
        "| row | warnings |",
        "|---|---|",
    ]
    escape = str.maketrans({"|": "\\|"})  # a note's '|' would end its table cell
    lines += [f"| {row} | {notes.translate(escape)} |" for row, notes in noted]
    return lines + [""]


def baseline_section(lb: pl.DataFrame) -> list[str]:
    """For every pipeline, in how many cells it beats the ``uniform`` baseline (DPBench)."""
    base = lb.filter(pl.col("pipeline") == BASELINE_PIPELINE)
    if base.is_empty():
        return []
    keys = ["dataset", "users", "epsilon", "metric", "oracle"]
    joined = join_matching_nulls(
        lb.filter(pl.col("pipeline") != BASELINE_PIPELINE), base.select(keys + [pl.col("mean").alias("baseline")]), keys
    )
    if joined.is_empty():
        return []
    score = (
        pl.when(pl.col("greater_is_better"))
        .then(pl.col("mean") - pl.col("baseline"))
        .otherwise(pl.col("baseline") - pl.col("mean"))
    )
    summary = (
        joined.with_columns(beats=score > 0)
        .group_by(["oracle", "pipeline", "metric"], maintain_order=True)
        .agg(beats=pl.col("beats").sum(), cells=pl.len())
    )
    lines = [
        "## Against the uniform baseline\n",
        "DPBench (Hay et al., SIGMOD 2016): a method should beat the trivial estimate 1/d for every item.\n",
        "| oracle | pipeline | metric | beats uniform |",
        "|---|---|---|---|",
    ]
    for r in summary.iter_rows(named=True):
        verdict = "yes" if r["beats"] == r["cells"] else ("no" if r["beats"] == 0 else "sometimes")
        lines.append(
            f"| {r['oracle']} | {r['pipeline']} | {r['metric']} | {verdict} ({r['beats']} of {r['cells']} cells) |"
        )
    return lines + [""]


def ranks_section(lb: pl.DataFrame, out: Path, alpha: float) -> tuple[list[str], list[Path]]:
    """Average ranks, Friedman and a CD diagram per metric (grids of at least 2 cells)."""
    from ldpbench.report.figures import slug
    from ldpbench.stats.ranks import format_ranks, grid_ranks, plot_cd

    lines, figures = [], []
    for metric in dict.fromkeys(lb["metric"].to_list()):
        try:
            result = grid_ranks(lb, metric, alpha)
        except UsageError:
            continue  # too few methods or complete cells to rank
        path = plot_cd(result, out / f"cd-{slug(metric)}.png")
        figures.append(path)
        lines += [
            f"## Ranks across the grid · {metric}\n",
            f"![critical difference · {metric}]({path.name})\n",
            "```",
            format_ranks(result).rstrip("\n"),
            "```",
            "",
        ]
    if lines:
        lines.insert(0, "Ranks: Demšar (JMLR 2006); see docs/statistics.md for the tests and their assumptions.\n")
    return lines, figures
