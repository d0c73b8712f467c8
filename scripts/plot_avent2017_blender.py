"""Figures and tables of ``reports/avent2017_blender.md`` from a run of ``specs/avent2017_blender.yaml``.

Usage (from the repository root)::

    ldpbench run specs/avent2017_blender.yaml --out results/avent2017_blender
    python scripts/plot_avent2017_blender.py results/avent2017_blender

Writes ``reports/avent2017_blender_{ndcg,l1}_{optin,eps}.png`` ([A17] Fig. 13-16 analogues) and
prints the Markdown tables of the write-up, including an analogue of [A17] Fig. 9 (the top-10
AOL queries with the blended, opt-in and client estimates of one Blender run at the paper's
settings, run here directly through the plugins). A point whose mean head-list size is below its target
M, or where the metric was undefined in some repeats (an L1 whose estimate projects to all zeros),
is drawn hollow ([A17] leaves such points out).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ldpbench.results.read import read_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BLENDER = re.compile(
    r"blender\((?:delta=[^,]+,)?opt_in_fraction=([\d.]+),head_list_size=(\d+)(?:,project_groups=\w+)?\):(opt-in|client|blended)"
)
GROUPS = ("opt-in", "client", "blended")
COLORS = {"opt-in": "tab:orange", "client": "tab:blue", "blended": "tab:green", "olh": "tab:gray", "grr": "black"}
DATASETS = ("synthetic-search", "aol-queries")
NDCG = "ndcg(k=10,structure=list-of-lists)"


def load(results: Path) -> pl.DataFrame:
    rows = read_run(results).rows  # the spec's current cells, the latest append of each
    ok = rows.filter(pl.col("error").is_null() & pl.col("value").is_not_nan())
    stats = ok.group_by(["dataset", "epsilon", "oracle", "metric"]).agg(
        mean=pl.col("value").mean(), sd=pl.col("value").std(), reps=pl.len()
    )
    failed = rows.filter(pl.col("error").is_not_null()).group_by(["dataset", "epsilon", "oracle", "metric"]).len()
    stats = stats.join(failed.rename({"len": "failed"}), on=["dataset", "epsilon", "oracle", "metric"], how="left")
    parsed = stats["oracle"].map_elements(_parse, return_dtype=pl.List(pl.String))
    return stats.with_columns(
        fraction=parsed.list.get(0).cast(pl.Float64),
        M=parsed.list.get(1).cast(pl.Int64),
        group=parsed.list.get(2),
        stderr=pl.col("sd") / pl.col("reps").sqrt(),
        failed=pl.col("failed").fill_null(0),
    )


def _parse(label: str) -> list[str | None]:
    m = BLENDER.fullmatch(label)
    return [m.group(1), m.group(2), m.group(3)] if m else [None, None, label]


def head_list_sizes(stats: pl.DataFrame) -> dict[tuple, float]:
    sizes = stats.filter((pl.col("metric") == "estimate-size") & pl.col("M").is_not_null())
    return {(r["dataset"], r["epsilon"], r["fraction"], r["M"]): r["mean"] for r in sizes.iter_rows(named=True)}


def plot(
    stats: pl.DataFrame, metric_for_m, sweep: str, ylabel: str, out: Path, baselines=("olh", "grr"), ylim=None
) -> None:
    sizes = head_list_sizes(stats)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), sharex=True)
    for row, dataset in enumerate(DATASETS):
        for col, M in enumerate((10, 50)):
            ax = axes[row, col]
            metric = metric_for_m(M)
            data = stats.filter((pl.col("dataset") == dataset) & (pl.col("metric") == metric))
            if sweep == "fraction":
                sub = data.filter(pl.col("epsilon") == 4.0)
                x_of = lambda r: r["fraction"] * 100  # noqa: E731
                base_x = [1, 10]
            else:
                sub = data.filter((pl.col("fraction") == 0.05) | pl.col("fraction").is_null())
                x_of = lambda r: r["epsilon"]  # noqa: E731
                base_x = None
            for group in GROUPS:
                g = sub.filter((pl.col("group") == group) & (pl.col("M") == M)).sort(
                    "fraction" if sweep == "fraction" else "epsilon"
                )
                xs = [x_of(r) for r in g.iter_rows(named=True)]
                ys = g["mean"].to_list()
                es = g["stderr"].fill_null(0).to_list()
                full = [
                    sizes.get((dataset, r["epsilon"], r["fraction"], M), 0) >= M - 1e-9 and not r["failed"]
                    for r in g.iter_rows(named=True)
                ]
                ax.errorbar(xs, ys, yerr=es, color=COLORS[group], label=group, lw=1.5, capsize=2)
                ax.scatter(
                    [x for x, f in zip(xs, full) if not f],
                    [y for y, f in zip(ys, full) if not f],
                    facecolors="white",
                    edgecolors=COLORS[group],
                    zorder=3,
                    s=30,
                )
                ax.scatter(
                    [x for x, f in zip(xs, full) if f],
                    [y for y, f in zip(ys, full) if f],
                    color=COLORS[group],
                    zorder=3,
                    s=18,
                )
            for base in baselines:
                b = sub.filter(pl.col("group") == base).sort("epsilon")
                if b.height == 0:
                    continue
                if sweep == "fraction":
                    ax.plot(base_x, [b["mean"][0]] * 2, ls="--", color=COLORS[base], label=f"{base} (all users local)")
                else:
                    ax.plot(
                        b["epsilon"].to_list(),
                        b["mean"].to_list(),
                        ls="--",
                        color=COLORS[base],
                        label=f"{base} (all users local)",
                    )
            ax.set_title(f"{dataset}, head list M = {M}", fontsize=10)
            ax.grid(alpha=0.3)
            if ylim:
                ax.set_ylim(*ylim)
            if row == 1:
                ax.set_xlabel("opt-in users (%)" if sweep == "fraction" else "epsilon")
            if col == 0:
                ax.set_ylabel(ylabel)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    cond = "eps = 4" if sweep == "fraction" else "5% opt-in"
    fig.suptitle(
        f"{ylabel} ({cond}; mean ± s.e. over repeats; hollow: head list below M, or metric undefined in some repeats)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def fmt(mean: float, se: float | None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    if se is None or (isinstance(se, float) and math.isnan(se)):
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {se:.3f}"


def table(stats: pl.DataFrame, eps: float = 4.0, fraction: float = 0.05) -> str:
    metrics = [
        ("ndcg(k=10,structure=list-of-lists)", "NDCG@10 list of lists"),
        ("ndcg(k=10)", "NDCG@10 records"),
        ("ndcg(k=10,structure=queries)", "NDCG@10 queries"),
    ]
    lines = []
    for dataset in DATASETS:
        for M in (10, 50):
            l1 = f"l1(top={M})"
            head = ["estimate", *[name for _, name in metrics], f"L1 (M = {M})", "head-list size"]
            lines.append(f"\n**{dataset}, M = {M}** (eps = {eps:g}, {fraction:.0%} opt-in)\n")
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            for group in (*GROUPS, "olh", "grr"):
                sel = (pl.col("dataset") == dataset) & (pl.col("epsilon") == eps) & (pl.col("group") == group)
                if group in GROUPS:
                    sel = sel & (pl.col("M") == M) & (pl.col("fraction") == fraction)
                cells = [group if group in GROUPS else f"{group} (all local)"]
                for metric in [m for m, _ in metrics] + [l1, "estimate-size"]:
                    r = stats.filter(sel & (pl.col("metric") == metric))
                    if r.height == 0:
                        cells.append("—")
                        continue
                    text = fmt(r["mean"][0], r["stderr"][0]) if metric != "estimate-size" else f"{r['mean'][0]:.0f}"
                    if r["failed"][0]:
                        text += f" ({r['failed'][0]} failed)"
                    cells.append(text)
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def eps_table(stats: pl.DataFrame, fraction: float = 0.05) -> str:
    """Blended list-of-lists NDCG@10 against eps at one opt-in fraction, [mean head-list size]."""
    eps_values = sorted(stats["epsilon"].unique().to_list())
    head = ["dataset, M", *[f"eps = {e:g}" for e in eps_values]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sizes = head_list_sizes(stats)
    for dataset in DATASETS:
        for M in (10, 50):
            cells = [f"{dataset}, {M}"]
            for e in eps_values:
                r = stats.filter(
                    (pl.col("dataset") == dataset)
                    & (pl.col("epsilon") == e)
                    & (pl.col("metric") == NDCG)
                    & (pl.col("group") == "blended")
                    & (pl.col("M") == M)
                    & (pl.col("fraction") == fraction)
                )
                size = sizes.get((dataset, e, fraction, M))
                cells.append("—" if r.height == 0 else f"{fmt(r['mean'][0], r['stderr'][0])} [{size:.0f}]")
            lines.append("| " + " | ".join(cells) + " |")
    for base in ("olh", "grr"):
        cells = [f"{base.upper()} (all local), synthetic / AOL"]
        for e in eps_values:
            vals = []
            for dataset in DATASETS:
                r = stats.filter(
                    (pl.col("dataset") == dataset)
                    & (pl.col("epsilon") == e)
                    & (pl.col("metric") == NDCG)
                    & (pl.col("group") == base)
                )
                vals.append("—" if r.height == 0 else fmt(r["mean"][0], r["stderr"][0]))
            cells.append(" / ".join(vals))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def optin_table(stats: pl.DataFrame, eps: float = 4.0) -> str:
    """Blended list-of-lists NDCG@10 against the opt-in fraction at one eps, [mean head-list size]."""
    fractions = sorted(stats["fraction"].drop_nulls().unique().to_list())
    head = ["dataset, M", *[f"{f:.1%}" for f in fractions]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sizes = head_list_sizes(stats)
    for dataset in DATASETS:
        for M in (10, 50):
            cells = [f"{dataset}, {M}"]
            for f in fractions:
                r = stats.filter(
                    (pl.col("dataset") == dataset)
                    & (pl.col("epsilon") == eps)
                    & (pl.col("metric") == NDCG)
                    & (pl.col("group") == "blended")
                    & (pl.col("M") == M)
                    & (pl.col("fraction") == f)
                )
                size = sizes.get((dataset, eps, f, M))
                cells.append("—" if r.height == 0 else f"{fmt(r['mean'][0], r['stderr'][0])} [{size:.0f}]")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def failures(stats: pl.DataFrame) -> str:
    """Where rows failed (an empty head list leaves NDCG and L1 undefined): one line per Blender
    setting, with the repeats that failed and the failed rows over its estimates and metrics."""
    failed = (
        stats.filter(pl.col("failed") > 0)
        .group_by(["dataset", "fraction", "epsilon", "M"])
        .agg(
            repeats=pl.col("failed").max(), rows=pl.col("failed").sum(), total=(pl.col("failed") + pl.col("reps")).max()
        )
        .sort(["dataset", "fraction", "epsilon", "M"])
    )
    if failed.height == 0:
        return "No failed rows."
    head = ["dataset", "opt-in", "eps", "M", "failed repeats", "failed rows", "mean head-list size"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sizes = head_list_sizes(stats)
    for r in failed.iter_rows(named=True):
        size = sizes.get((r["dataset"], r["epsilon"], r["fraction"], r["M"]))
        cells = [r["dataset"], f"{r['fraction']:.1%}", f"{r['epsilon']:g}", str(r["M"])]
        cells += [f"{r['repeats']} of {r['total']}", str(r["rows"]), "—" if size is None else f"{size:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(f"\n{int(failed['rows'].sum())} failed rows in all.")
    return "\n".join(lines)


def figure9(seed: int = 2017) -> str:
    """[A17] Fig. 9 on aol-queries: top-10 true queries, estimates of one run (eps 4, 5%, M 50, blend projected)."""
    import numpy as np

    from ldpbench import build_plugins

    plugins = build_plugins()
    truth = plugins.create("dataset", "aol-queries", {}).load(np.random.default_rng(seed))
    out = plugins.create("protocol", "blender", {"project_groups": "blended"}).run(
        truth, 4.0, np.random.default_rng(seed)
    )
    f = truth.frequencies
    cols = {}
    for group, est in out.items():
        # aol-queries: one record per query, so the query-level estimates are per record
        cols[group] = dict(zip(est.info["queries"], est.info["query_frequencies"]))
    top = np.argsort(-f, kind="stable")[:10]
    head = ["query", "p (true)", "blended", "opt-in", "client"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    regressions = {g: 0 for g in ("blended", "opt-in", "client")}
    previous = {g: float("inf") for g in regressions}
    for v in top.tolist():
        cells = [f"`{truth.labels[v].rstrip()}`", f"{f[v]:.4f}"]
        for g in ("blended", "opt-in", "client"):
            value = cols[g].get(v)
            if value is None:
                cells.append("(not in list)")
                continue
            mark = ""
            if value > previous[g]:
                regressions[g] += 1
                mark = " ↑"
            previous[g] = value
            cells.append(f"{value:.4f}{mark}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Regressions (an estimate above the one of the query ranked before it, marked ↑): "
        + ", ".join(f"{g} {n}" for g, n in regressions.items())
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="results folder of the run")
    parser.add_argument("--out", type=Path, default=ROOT / "reports", help="folder for the figures")
    args = parser.parse_args(argv)
    stats = load(args.results)
    args.out.mkdir(parents=True, exist_ok=True)
    plot(stats, lambda M: NDCG, "fraction", "NDCG@10 (list of lists)", args.out / "avent2017_blender_ndcg_optin.png")
    plot(stats, lambda M: NDCG, "eps", "NDCG@10 (list of lists)", args.out / "avent2017_blender_ndcg_eps.png")
    # GRR's L1 is left out: over 10^5+ records its estimates of the true head are noise whose
    # sum is often <= 0, so the rescaled L1 is undefined or huge (see the tables).
    for sweep, name in (("fraction", "optin"), ("eps", "eps")):
        plot(
            stats,
            lambda M: f"l1(top={M})",
            sweep,
            "L1 of the head list",
            args.out / f"avent2017_blender_l1_{name}.png",
            baselines=("olh",),
        )
    print(table(stats))
    print("\nBlended NDCG@10 (list of lists) vs eps at 5% opt-in [mean head-list size]\n")
    print(eps_table(stats))
    print("\nBlended NDCG@10 (list of lists) vs opt-in fraction at eps = 4 [mean head-list size]\n")
    print(optin_table(stats))
    print("\nFailed rows\n")
    print(failures(stats))
    print("\n" + figure9())
    return 0


if __name__ == "__main__":
    sys.exit(main())
