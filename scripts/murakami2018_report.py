"""Tables and figures for reports/murakami2018_small_samples.md.

    .venv/bin/ldpbench run specs/murakami2018_small_samples.yaml
    .venv/bin/ldpbench run specs/murakami2018_n_sweep.yaml
    .venv/bin/ldpbench run specs/murakami2018_eps_sweep.yaml
    .venv/bin/python scripts/murakami2018_report.py [--results results] [--out reports] [--extra]

From the three results folders: MSE (summed over the items, [MHS18]'s convention) per pipeline
with its standard error, and the **paired** difference of every pipeline to ``em`` (same users,
same reports in each repeat) with its standard error, beside [MHS18]'s published figures; the
alpha that em-murakami chose in each repeat (the rows' ``info`` column); MSE vs N and vs eps
figures.

Also counts the rows whose ``notes`` carry EM's iteration-cap warning (the run stopped at
``max_iter``: the last iterate, not the exact MLE), per group and pipeline.

``--extra`` adds what a spec cannot express, by direct simulation with the same settings and
plugins (ldpbench.engine.groups.simulate_groups, GRR aggregate path): EM's bias/variance decomposition
(400 repeats) and a scan of em-rilstone's ``scale`` multiplier (200 repeats, paired) -- a
sensitivity diagnostic of the derived correction's direction only: the derivation gives
scale 1, and no other multiplier is shipped in a spec.
Writes ``<out>/murakami2018_tables.md`` and ``<out>/murakami2018_*.png``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ldpbench import build_plugins  # noqa: E402
from ldpbench.engine.groups import simulate_groups  # noqa: E402
from ldpbench.results.read import read_run  # noqa: E402

METRIC = "mse(reduction=sum)"
STYLE = {
    "base": ("black", "o"),
    "base-pos+norm-sub": ("tab:green", "X"),
    "em": ("tab:blue", "s"),
    "em-murakami": ("tab:red", "v"),
    "em-rilstone": ("tab:orange", "D"),
    "em-bootstrap": ("tab:purple", "^"),
}


def paired_table(df: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """Mean, SE and the paired difference to ``em`` (by repeat) per group and pipeline."""
    df = df.filter(pl.col("metric") == METRIC)
    em = df.filter(pl.col("pipeline") == "em").select(group + ["repeat", pl.col("value").alias("em")])
    joined = df.join(em, on=group + ["repeat"], how="inner")
    joined = joined.with_columns((pl.col("value") - pl.col("em")).alias("diff"))
    return joined.group_by(group + ["pipeline"], maintain_order=True).agg(
        pl.len().alias("repeats"),
        pl.col("value").mean().alias("mean"),
        (pl.col("value").std() / pl.len().sqrt()).alias("se"),
        pl.col("diff").mean().alias("diff"),
        (pl.col("diff").std() / pl.len().sqrt()).alias("diff_se"),
        (pl.col("diff").mean() / pl.col("em").mean()).alias("relative"),
        (pl.col("diff") < 0).sum().alias("lower"),
    )


def markdown(table: pl.DataFrame, group: list[str]) -> str:
    head = group + ["pipeline", "repeats", "MSE (sum) ± SE", "paired diff to em ± SE", "relative", "repeats below em"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table.iter_rows(named=True):
        diff = "—" if r["pipeline"] == "em" else f"{r['diff']:+.3e} ± {r['diff_se']:.1e}"
        rel = "—" if r["pipeline"] == "em" else f"{100 * r['relative']:+.3g}%"
        lower = "—" if r["pipeline"] == "em" else str(r["lower"])
        mse = f"{r['mean']:.4e} ± {r['se']:.1e}"
        cells = [str(r[g]) for g in group] + [r["pipeline"], str(r["repeats"]), mse, diff, rel, lower]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_figure(table: pl.DataFrame, key: str, values: list[float], xlabel: str, path: Path, title: str) -> None:
    # only the swept values every pipeline has rows for (a partial run plots what it has)
    present = set(table["users"].to_list())
    for pipe in table["pipeline"].unique().to_list():
        present &= set(table.filter(pl.col("pipeline") == pipe)["users"].to_list())
    values = [v for v, k in zip(values, values_keys(values, key)) if k in present]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8))
    for pipe in table["pipeline"].unique(maintain_order=True).to_list():
        rows = table.filter(pl.col("pipeline") == pipe)
        order = [rows["users"].to_list().index(k) for k in values_keys(values, key)]
        mean = rows["mean"].to_numpy()[order]
        se = rows["se"].to_numpy()[order]
        colour, marker = STYLE.get(pipe, ("grey", "."))
        ax.errorbar(values, mean, yerr=se, label=pipe, color=colour, marker=marker, ms=4, lw=1, capsize=2)
        if pipe != "em":
            rel = rows["relative"].to_numpy()[order] * 100
            em_mean = table.filter(pl.col("pipeline") == "em")
            em_order = [em_mean["users"].to_list().index(k) for k in values_keys(values, key)]
            rel_se = rows["diff_se"].to_numpy()[order] / em_mean["mean"].to_numpy()[em_order] * 100
            bx.errorbar(values, rel, yerr=rel_se, label=pipe, color=colour, marker=marker, ms=4, lw=1, capsize=2)
    ticks = [tick_label(v) for v in values]
    for axis in (ax, bx):
        axis.set_xscale("log")
        axis.set_xticks(values, ticks)  # the swept values themselves, not log-decade labels
        axis.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("MSE, sum over items")
    ax.grid(True, alpha=0.3)
    bx.axhline(0, color="tab:blue", lw=1)
    bx.set_xlabel(xlabel)
    bx.set_ylabel("paired MSE change vs em (%)")
    bx.set_ylim(-20, 80)  # base leaves the panel at small N / eps: see the tables
    bx.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


CAP_NOTE = "EM hit the iteration cap"

#: [MHS18]'s published MSE (sum over items), EM -> their correction, N = 1070 (slides).
PAPER = "[MHS18]: USCensus 1.74e-2 -> 1.42e-2 (-18%); People-flow 1.68e-2 -> 1.20e-2 (-29%)"


def alpha_table(df: pl.DataFrame, group: list[str]) -> str:
    """Markdown: how often em-murakami chose each alpha (from the rows' ``info`` column)."""
    rows = df.filter((pl.col("metric") == METRIC) & (pl.col("pipeline") == "em-murakami"))
    rows = rows.with_columns(pl.col("info").str.json_path_match("$.alpha").cast(pl.Float64).alias("alpha"))
    counts = rows.group_by(group + ["alpha"]).agg(pl.len().alias("repeats")).sort(group + ["alpha"])
    lines = ["| " + " | ".join(group + ["alpha", "repeats"]) + " |", "|" + "---|" * (len(group) + 2)]
    for r in counts.iter_rows(named=True):
        lines.append("| " + " | ".join([str(r[g]) for g in group] + [f"{r['alpha']:g}", str(r["repeats"])]) + " |")
    return "\n".join(lines)


def notes_table(df: pl.DataFrame, group: list[str]) -> str:
    """Markdown: per group and pipeline, how many of the repeats' rows carry EM's iteration-cap note."""
    df = df.filter(pl.col("metric") == METRIC)
    counts = df.group_by(group + ["pipeline"], maintain_order=True).agg(
        pl.len().alias("rows"),
        pl.col("notes").fill_null("").str.contains(CAP_NOTE, literal=True).sum().alias("capped"),
        (pl.col("notes").is_not_null() & ~pl.col("notes").fill_null("").str.contains(CAP_NOTE, literal=True))
        .sum()
        .alias("other_notes"),
    )
    head = group + ["pipeline", "rows", "rows with the iteration-cap note", "rows with other notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in counts.iter_rows(named=True):
        cells = [str(r[g]) for g in group] + [r["pipeline"], str(r["rows"]), str(r["capped"]), str(r["other_notes"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tick_label(v: float) -> str:
    return "ln d" if abs(v - math.log(224)) < 1e-9 else f"{v:g}"


def values_keys(values: list[float], key: str) -> list[str]:
    return [f"{key}{v:g}" if key != "eps=" or abs(v - math.log(224)) > 1e-9 else "eps=ln(d)" for v in values]


# ----------------------------------------------------------------------------------------------
# Direct simulation (--extra)
# ----------------------------------------------------------------------------------------------

MIX = [(0.1, 500), (2.0, 500), (None, 50), (math.inf, 20)]


def populations(plugins):
    adult = plugins.create("dataset", "adult", {}).load(np.random.default_rng(0))
    zipf = plugins.create("dataset", "zipf", {"d": 281, "n": 303_916, "s": 1.0}).load(np.random.default_rng(0))
    return {"adult": adult, "zipf(d=281,s=1)": zipf}


def estimates(plugins, pop, repeats: int, seed: int):
    groups = [(math.log(pop.d) if eps is None else eps, n) for eps, n in MIX]
    make = lambda eps: plugins.create("oracle", "grr", {}, d=pop.d, epsilon=eps)  # noqa: E731
    rng = np.random.default_rng(seed)
    for _ in range(repeats):
        yield simulate_groups(make, pop, groups, rng)


def bias_decomposition(plugins, pop, repeats: int = 400) -> dict:
    em = plugins.create("postprocessor", "em", {})
    thetas = np.array([em.apply(e, None).frequencies for e in estimates(plugins, pop, repeats, 7)])
    truth = pop.frequencies
    bias = thetas.mean(axis=0) - truth
    top = np.argsort(-truth)[:10]
    empty = truth == 0
    return {
        "mse": float(((thetas - truth) ** 2).sum(axis=1).mean()),
        "bias2": float((bias**2).sum()),
        "variance": float(thetas.var(axis=0, ddof=1).sum()),
        "top10_relative_bias": float(bias[top].sum() / truth[top].sum()),
        "mean_on_empty_items": float(thetas[:, empty].mean()) if empty.any() else float("nan"),
        "empty_items": int(empty.sum()),
        "boundary_items": float((thetas < 1e-6 / pop.d).sum(axis=1).mean()),
    }


SCALES = (1, 10, 30, 100, 200, 300, 400, 500, 1000)


def scale_scan(plugins, pop, repeats: int = 200) -> dict:
    """Paired MSE change of project(theta - s * Delta / N) vs EM for several s (one EM per repeat).

    Same computation as the ``em-rilstone`` plugin with ``scale = s`` (checked against the plugin
    at s = 1 in every repeat), without re-running EM for each s.
    """
    from ldpbench_plugins.numerics.simplex import project_to_simplex
    from ldpbench_plugins.postprocessors._em import groups_of, newton_step, run_em

    plugin = plugins.create("postprocessor", "em-rilstone", {})
    truth = pop.frequencies
    base, diffs, l1 = [], {s: [] for s in SCALES}, []
    for est in estimates(plugins, pop, repeats, 11):
        groups = groups_of(est)
        result = run_em(groups)
        delta, _, _ = newton_step(groups, result.theta, result.m)
        e = float(((result.theta - truth) ** 2).sum())
        base.append(e)
        for s in SCALES:
            corrected = project_to_simplex(result.theta - s * delta / est.n)
            diffs[s].append(float(((corrected - truth) ** 2).sum()) - e)
            if s == 1:
                check = plugin.apply(est, None)
                assert np.allclose(check.frequencies, corrected, atol=1e-12)
                l1.append(check.info["correction_l1"])
    mean_em = float(np.mean(base))
    return {
        "em": mean_em,
        "correction_l1_scale1": float(np.mean(l1)),
        "scan": {
            s: (float(np.mean(d)), float(np.std(d, ddof=1) / math.sqrt(len(d))), float(np.mean(d)) / mean_em)
            for s, d in diffs.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--out", type=Path, default=Path("reports"))
    parser.add_argument("--extra", action="store_true", help="also run the direct simulations")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    parts = ["# Tables for murakami2018_small_samples.md (generated by scripts/murakami2018_report.py)\n"]

    main_df = read_run(args.results / "murakami2018_small_samples").rows
    failed = main_df.filter(pl.col("error").is_not_null())
    if failed.height:
        print("warning: failed rows:", failed["error"].unique().to_list())
    parts += [
        "## N = 1070, personalized budgets (specs/murakami2018_small_samples.yaml)\n",
        markdown(paired_table(main_df, ["dataset"]), ["dataset"]),
        "",
        PAPER + "\n",
        "em-murakami's alpha per repeat (from the rows' info column):\n",
        alpha_table(main_df, ["dataset"]),
        "",
        "Rows (metric mse, sum) carrying plugin notes:\n",
        notes_table(main_df, ["dataset"]),
        "",
    ]

    n_df = read_run(args.results / "murakami2018_n_sweep").rows
    n_table = paired_table(n_df, ["users"])
    parts += [
        "## N sweep, adult (specs/murakami2018_n_sweep.yaml)\n",
        markdown(n_table, ["users"]),
        "",
        "em-murakami's alpha per repeat:\n",
        alpha_table(n_df, ["users"]),
        "",
        "Rows (metric mse, sum) carrying plugin notes:\n",
        notes_table(n_df, ["users"]),
        "",
    ]
    sweep_figure(
        n_table,
        "N=",
        [200, 500, 1070, 2000, 5000, 10000, 20000],
        "N (users per repeat)",
        args.out / "murakami2018_n_sweep.png",
        "adult (d = 224), [MHS18] budget mix, GRR: MSE vs N (mean ± SE, 100 repeats)",
    )

    e_df = read_run(args.results / "murakami2018_eps_sweep").rows
    e_table = paired_table(e_df, ["users"])
    parts += [
        "## One budget for all 1070 users, adult (specs/murakami2018_eps_sweep.yaml)\n",
        markdown(e_table, ["users"]),
        "",
        "Rows (metric mse, sum) carrying plugin notes:\n",
        notes_table(e_df, ["users"]),
        "",
    ]
    sweep_figure(
        e_table,
        "eps=",
        [0.5, 1, 2, 4, math.log(224), 8],
        "epsilon (all N = 1070 users)",
        args.out / "murakami2018_eps_sweep.png",
        "adult (d = 224), one budget, N = 1070, GRR: MSE vs epsilon (mean ± SE, 100 repeats)",
    )

    if args.extra:
        plugins = build_plugins()
        for name, pop in populations(plugins).items():
            dec = bias_decomposition(plugins, pop)
            parts += [f"## EM bias/variance at N = 1070, {name} (400 repeats)\n", "| quantity | value |", "|---|---|"]
            parts += [f"| {k} | {v:.4g} |" for k, v in dec.items()] + [""]
            scan = scale_scan(plugins, pop)
            parts += [
                f"## em-rilstone scale scan (sensitivity diagnostic; shipped: scale 1), {name} (200 repeats, paired with em; EM MSE {scan['em']:.4e}; "
                f"mean L1 of the correction at scale 1: {scan['correction_l1_scale1']:.2e})\n",
                "| scale | paired MSE diff ± SE | relative |",
                "|---|---|---|",
            ]
            for s, (d, se, r) in scan["scan"].items():
                parts.append(f"| {s} | {d:+.3e} ± {se:.1e} | {100 * r:+.2f}% |")
            parts.append("")
            print(name, dec, scan)
    path = args.out / "murakami2018_tables.md"
    path.write_text("\n".join(parts) + "\n")
    print("wrote", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
