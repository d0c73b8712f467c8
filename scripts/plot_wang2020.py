"""Figures and summary tables for reports/wang2020_consistency.md from a results folder.

    .venv/bin/ldpbench run specs/wang2020_consistency.yaml
    .venv/bin/python scripts/plot_wang2020.py results/wang2020_consistency reports/wang2020_consistency

One figure per query type (metric): error vs epsilon, one panel per (dataset, oracle), one line
per post-processing pipeline with +-1 standard-error bars; plus ``summary.md`` with, for each
(dataset, metric), the winning pipeline per (oracle, epsilon) and each pipeline's mean rank, and
``bias.md``, the bias of each method on rare and on frequent items (the slides' experiment, run
here directly through the plugins with fixed seeds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ldpbench.leaderboard.aggregate import aggregate  # noqa: E402
from ldpbench.results.read import read_run  # noqa: E402

STYLE = {  # pipeline -> (colour, marker); the [W20] families share a colour family
    "base": ("black", "o"),
    "base-pos": ("tab:red", "v"),
    "post-pos": ("tab:pink", "^"),
    "base-cut": ("tab:brown", "<"),
    "norm": ("tab:blue", "s"),
    "norm-mul": ("tab:cyan", "D"),
    "norm-cut": ("tab:olive", "P"),
    "norm-sub": ("tab:green", "X"),
    "mle-apx": ("tab:purple", "*"),
    "power": ("tab:orange", "h"),
    "power-ns": ("gold", "H"),
}
TITLES = {
    "mse": "full-domain MSE",
    "set-query(rho=10)": "set-query MSE, rho = 10%",
    "set-query(rho=50)": "set-query MSE, rho = 50%",
    "topk-mse(k=32)": "top-32 MSE",
}


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def plot_metric(lb: pl.DataFrame, metric: str, out: Path) -> Path:
    sub = lb.filter(pl.col("metric") == metric)
    datasets = sub["dataset"].unique(maintain_order=True).to_list()
    oracles = sub["oracle"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(
        len(datasets), len(oracles), figsize=(3.4 * len(oracles), 2.9 * len(datasets)), squeeze=False, sharex=True
    )
    for i, ds in enumerate(datasets):
        for j, fo in enumerate(oracles):
            ax = axes[i][j]
            cell = sub.filter((pl.col("dataset") == ds) & (pl.col("oracle") == fo))
            for pipe in cell["pipeline"].unique(maintain_order=True).to_list():
                rows = cell.filter(pl.col("pipeline") == pipe).sort("epsilon")
                colour, marker = STYLE.get(pipe, ("grey", "."))
                ax.errorbar(
                    rows["epsilon"].to_numpy(),
                    rows["mean"].to_numpy(),
                    yerr=rows["stderr"].fill_nan(0).to_numpy(),
                    label=pipe,
                    color=colour,
                    marker=marker,
                    markersize=4,
                    linewidth=1,
                    capsize=2,
                )
            ax.set_yscale("log")
            ax.set_title(f"{ds.split('(')[0]} / {fo}", fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
            if i == len(datasets) - 1:
                ax.set_xlabel("epsilon")
            if j == 0:
                ax.set_ylabel(TITLES.get(metric, metric), fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 11), fontsize=8, frameon=False)
    fig.suptitle(f"[W20] reproduction: {TITLES.get(metric, metric)} vs epsilon (mean +- 1 SE)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    path = out / f"{_slug(metric)}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def summary(lb: pl.DataFrame) -> str:
    lines = []
    for (ds, metric), block in lb.group_by(["dataset", "metric"], maintain_order=True):
        lines.append(f"### {ds} — {TITLES.get(metric, metric)}\n")
        eps = sorted(block["epsilon"].unique().to_list())
        lines.append("| oracle | " + " | ".join(f"eps={e:g}" for e in eps) + " |")
        lines.append("|---|" + "---|" * len(eps))
        ranks: dict[str, list[float]] = {}
        for fo in block["oracle"].unique(maintain_order=True).to_list():
            row = [fo]
            for e in eps:
                g = block.filter((pl.col("oracle") == fo) & (pl.col("epsilon") == e)).sort("mean")
                best = g.row(0, named=True)
                row.append(f"{best['pipeline']} {best['mean']:.3g}±{best['stderr']:.1g}")
                order = g["pipeline"].to_list()
                for r, p in enumerate(order, start=1):
                    ranks.setdefault(p, []).append(r)
            lines.append("| " + " | ".join(row) + " |")
        mean_rank = sorted((np.mean(v), p) for p, v in ranks.items())
        ranked = ", ".join(f"{p} {r:.1f}" for r, p in mean_rank)
        lines.append(f"\nmean rank (1 = best) over oracles and budgets: {ranked}")
        lines.append("")
    return "\n".join(lines)


def bias_table(trials: int = 200, epsilon: float = 1.0, seed: int = 20200223) -> str:
    """[W20] slides 9-10: mean bias of each method on the 500 rarest and the 10 most frequent items.

    The slides' setting (Zipf s = 1.5, d = 1024, n = 10^6), eps = 1, every oracle on the aggregate
    path; ``bias = mean over trials of mean over the items of (f'_v - f_v)``, with its standard
    error over trials and z = bias / SE.
    """
    from ldpbench import build_plugins
    from ldpbench.engine.pipeline import apply_pipeline
    from ldpbench.engine.simulate import simulate
    from ldpbench.spec.seeding import rng_for

    plugins = build_plugins()
    pop = plugins.create("dataset", "zipf", {"d": 1024, "n": 1_000_000, "s": 1.5}).load(None)
    f = pop.frequencies
    order = np.argsort(-f, kind="stable")
    groups = {"500 rarest": order[-500:], "10 most frequent": order[:10]}
    methods = ["base", "base-pos", "norm", "norm-sub", "mle-apx", "power-ns"]
    lines = [
        "| oracle | method | " + " | ".join(f"bias on {g} (z)" for g in groups) + " |",
        "|---|---|" + "---|" * len(groups),
    ]
    for oracle_name in ("grr", "olh", "oue", "hr"):
        oracle = plugins.create("oracle", oracle_name, {}, d=pop.d, epsilon=epsilon)
        bias = {(m, g): np.empty(trials) for m in methods for g in groups}
        for t in range(trials):
            est = simulate(oracle, pop.counts, rng_for(seed, "bias", oracle_name, t), "aggregate")
            for m in methods:
                out = apply_pipeline([plugins.create("postprocessor", m)], est, rng_for(seed, "bias-pp", t))
                answers = out.item_answers()
                for g, items in groups.items():
                    bias[m, g][t] = np.mean(answers[items] - f[items])
        for m in methods:
            cells = []
            for g in groups:
                b = bias[m, g]
                se = b.std(ddof=1) / np.sqrt(trials)
                cells.append(f"{b.mean():+.2e} ({b.mean() / se:+.0f})")
            lines.append(f"| {oracle_name} | {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    results, out = Path(argv[1]), Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    lb = aggregate(read_run(results).rows)
    failed = lb.filter(pl.col("failed") > 0)
    if not failed.is_empty():
        print(f"warning: {failed.height} leaderboard rows have failed repeats:", failed["error"].unique().to_list())
    for metric in lb["metric"].unique(maintain_order=True).to_list():
        print("wrote", plot_metric(lb, metric, out))
    (out / "summary.md").write_text(summary(lb))
    print("wrote", out / "summary.md")
    (out / "bias.md").write_text(bias_table())
    print("wrote", out / "bias.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
