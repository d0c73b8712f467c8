"""Figures and tables for reports/wang2017_oracles.md from a results folder.

    .venv/bin/ldpbench run specs/wang2017_oracles.yaml
    .venv/bin/ldpbench run specs/wang2017_oracles_small.yaml
    .venv/bin/python scripts/plot_wang2017.py results/wang2017_oracles results/wang2017_oracles_small \
        --out reports/wang2017_oracles --report reports/wang2017_oracles.md

Writes into the output folder:

- ``mse_vs_eps.png``: measured MSE (± 1 standard error) and the oracle's own variance formula
  (lines) against eps, one panel per domain size of ``PANEL_DOMAINS``;
- ``mse_vs_d.png``: the same against d, one panel per budget of ``PANEL_EPSILONS``;
- ``ratio.png``: measured / theory for every (d, eps) cell, one heat map per oracle;
- ``crossover.png``: where GRR overtakes OLH: the closed form 3 e^eps + 2 of [W17] §4 (the comparison of the protocols), the
  crossing of the theory curves and the measured one with a bootstrap 95% interval;
- ``reports/wang2017_oracles/tables.md``: the ratio tables, the orderings [W17] states, the crossovers and the best oracle
  per cell, every number with the run it comes from.

With ``--report FILE`` it also rewrites the generated blocks of the write-up (between
``<!-- BEGIN name -->`` and ``<!-- END name -->``: oracles, repeats, ratio, orderings, crossovers).

The closed forms and the crossover arithmetic are in ``scripts/wang2017_analysis.py``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wang2017_analysis as w17  # noqa: E402

from ldpbench.leaderboard.aggregate import aggregate  # noqa: E402
from ldpbench.results.read import read_run  # noqa: E402

#: colour and marker per oracle; the [W17] families share hues (unary: blues, hashing: greens)
STYLE = {
    "grr": ("black", "o"),
    "oue": ("tab:blue", "s"),
    "sue": ("tab:cyan", "D"),
    "olh": ("tab:green", "^"),
    "blh": ("yellowgreen", "v"),
    "she": ("tab:red", "<"),
    "the": ("tab:orange", ">"),
    "hr": ("tab:purple", "P"),
    "ss": ("tab:brown", "X"),
    "cms": ("tab:pink", "h"),
    "hcms": ("magenta", "H"),
    "pgr": ("tab:olive", "*"),
    "adp": ("grey", "d"),
}
PANEL_DOMAINS = (64, 1024, 16384)
PANEL_EPSILONS = (1.0, 3.0, 5.0)
#: claims of [W17] that some oracles are worse than OUE and OLH (§4, Table 1)
WORSE_THAN_OUE_OLH = ("sue", "she", "the", "blh")
BOOTSTRAP_SEED = 20170816


def leaderboard(results: list[Path]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The raw-estimate MSE rows of one or more runs, aggregated, and the per-repeat rows."""
    rows = pl.concat([read_run(folder).rows for folder in results], how="diagonal_relaxed").filter(
        (pl.col("pipeline") == "base") & (pl.col("metric") == "mse")
    )
    lb = aggregate(rows)
    failed = lb.filter(pl.col("failed") > 0)
    if not failed.is_empty():
        raise SystemExit(f"{failed.height} rows have failed repeats: {failed['error'].unique().to_list()}")
    lb = lb.with_columns(
        (pl.col("mean") / pl.col("theory")).alias("ratio"),
        ((pl.col("mean") - pl.col("theory")) / pl.col("stderr")).alias("z"),
        pl.struct("oracle", "epsilon", "d", "n")
        .map_elements(lambda r: w17.paper_mse(r["oracle"], r["epsilon"], r["d"], r["n"]), return_dtype=pl.Float64)
        .alias("paper"),
    )
    return lb, rows


def oracles_of(lb: pl.DataFrame) -> list[str]:
    return lb["oracle"].unique(maintain_order=True).to_list()


def _style(oracle: str) -> tuple[str, str]:
    return STYLE.get(oracle, ("grey", "."))


def _cell(lb: pl.DataFrame, oracle: str, **where: float) -> pl.DataFrame:
    out = lb.filter(pl.col("oracle") == oracle)
    for column, value in where.items():
        out = out.filter(pl.col(column) == value)
    return out


def plot_curves(lb: pl.DataFrame, axis: str, panels: tuple[float, ...], out: Path) -> Path:
    """Measured MSE (markers, ± SE) and theory (lines) along ``axis`` ("epsilon" or "d")."""
    fixed = "d" if axis == "epsilon" else "epsilon"
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.0), squeeze=False)
    for ax, value in zip(axes[0], panels):
        for oracle in oracles_of(lb):
            rows = _cell(lb, oracle, **{fixed: value}).sort(axis)
            if rows.is_empty():
                continue
            colour, marker = _style(oracle)
            x = rows[axis].to_numpy()
            ax.plot(x, rows["theory"].to_numpy(), color=colour, linewidth=1, alpha=0.7)
            ax.errorbar(
                x,
                rows["mean"].to_numpy(),
                yerr=rows["stderr"].to_numpy(),
                color=colour,
                marker=marker,
                markersize=4,
                linestyle="none",
                capsize=2,
                label=oracle,
            )
        ax.set_yscale("log")
        if axis == "d":
            ax.set_xscale("log", base=2)
        ax.set_xlabel("epsilon" if axis == "epsilon" else "domain size d")
        ax.set_title(f"{fixed} = {value:g}", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("full-domain MSE (fraction scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 13), fontsize=8, frameon=False)
    fig.suptitle(
        f"[W17] reproduction: measured MSE (markers, ± 1 SE) and the variance formula (lines) vs {axis}", fontsize=10
    )
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    path = out / ("mse_vs_eps.png" if axis == "epsilon" else "mse_vs_d.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ratios(lb: pl.DataFrame, out: Path) -> Path:
    """measured / theory per (d, eps), one heat map per oracle, colours clipped to [0.85, 1.15]."""
    names = oracles_of(lb)
    cols = min(4, len(names))
    rows_n = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(
        rows_n, cols, figsize=(3.6 * cols + 1.2, 3.0 * rows_n + 0.6), squeeze=False, layout="constrained"
    )
    eps = sorted(lb["epsilon"].unique().to_list())
    ds = sorted(lb["d"].unique().to_list())
    image = None
    for k, oracle in enumerate(names):
        ax = axes[k // cols][k % cols]
        grid = np.full((len(ds), len(eps)), np.nan)
        for r in _cell(lb, oracle).iter_rows(named=True):
            grid[ds.index(r["d"]), eps.index(r["epsilon"])] = r["ratio"]
        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="coolwarm", vmin=0.85, vmax=1.15)
        ax.set_xticks(range(len(eps)), [f"{e:g}" for e in eps], fontsize=7)
        ax.set_yticks(range(len(ds)), [f"2^{int(round(math.log2(d)))}" for d in ds], fontsize=7)
        ax.set_title(oracle, fontsize=9)
        ax.set_xlabel("epsilon", fontsize=8)
    for k in range(len(names), rows_n * cols):
        axes[k // cols][k % cols].axis("off")
    fig.colorbar(image, ax=axes, shrink=0.8, label="measured MSE / theory")
    fig.suptitle("[W17] reproduction: measured / analytic per cell (1 = the formula holds)", fontsize=10)
    path = out / "ratio.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def crossovers(lb: pl.DataFrame, rows: pl.DataFrame, other: str = "olh") -> tuple[list[dict], list[dict]]:
    """GRR vs ``other``: the crossing along d for every eps, and along eps for every d.

    Each entry has the closed form of [W17] (Var*), the exact crossing of the expected full-domain
    MSE against OUE (f_v terms included), the crossing of the run's theory columns (interpolated on
    the grid), the measured one and its bootstrap interval (resampling repeats within each cell).
    """
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    per_repeat = {
        key: np.asarray(group["value"].to_list(), dtype=float)
        for key, group in rows.group_by(["oracle", "d", "epsilon"])
    }
    along_d, along_eps = [], []
    ds = sorted(lb["d"].unique().to_list())
    eps_grid = sorted(lb["epsilon"].unique().to_list())
    for axis, grid, fixed_values, closed, exact, sink in (
        ("d", ds, eps_grid, w17.crossover_domain, w17.mse_crossover_domain, along_d),
        ("epsilon", eps_grid, ds, w17.crossover_epsilon, w17.mse_crossover_epsilon, along_eps),
    ):
        grr_wins_low = axis == "d"
        fixed = "epsilon" if axis == "d" else "d"
        for value in fixed_values:
            g = _cell(lb, "grr", **{fixed: value}).sort(axis)
            o = _cell(lb, other, **{fixed: value}).sort(axis)
            x = np.asarray(grid, dtype=float)
            theory, theory_note = w17.crossover(x, g["theory"].to_numpy(), o["theory"].to_numpy(), grr_wins_low)
            measured, note = w17.crossover(x, g["mean"].to_numpy(), o["mean"].to_numpy(), grr_wins_low)

            def key(oracle: str, at: float, value=value, axis=axis) -> tuple:
                return (oracle, at, value) if axis == "d" else (oracle, value, at)

            low = high = float("nan")
            missing = 0
            if math.isfinite(measured):
                low, high, missing = w17.bootstrap_crossover(
                    x,
                    [per_repeat[key("grr", a)] for a in grid],
                    [per_repeat[key(other, a)] for a in grid],
                    grr_wins_low,
                    rng,
                )
            sink.append(
                {
                    fixed: value,
                    "closed": closed(value),
                    "exact": exact(value),
                    "theory": theory,
                    "theory_note": theory_note,
                    "measured": measured,
                    "note": note,
                    "low": low,
                    "high": high,
                    "missing": missing,
                }
            )
    return along_d, along_eps


def plot_crossover(along_d: list[dict], along_eps: list[dict], other: str, out: Path) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    eps = np.linspace(0.5, 5, 200)
    left.plot(eps, 3 * np.exp(eps) + 2, color="black", linewidth=1, label="[W17] Var*: d* = 3 e^eps + 2")
    left.plot(
        eps,
        [w17.mse_crossover_domain(e) for e in eps],
        color="grey",
        linestyle="--",
        linewidth=1,
        label="expected MSE (f_v terms), GRR vs OUE",
    )
    for label, key, colour in (
        ("theory columns", "theory", "tab:blue"),
        ("measured (95% bootstrap)", "measured", "tab:red"),
    ):
        pts = [r for r in along_d if math.isfinite(r[key])]
        x = [r["epsilon"] for r in pts]
        y = [r[key] for r in pts]
        if key == "measured":
            err = [[r[key] - r["low"] for r in pts], [r["high"] - r[key] for r in pts]]
            left.errorbar(x, y, yerr=err, color=colour, marker="o", linestyle="none", capsize=3, label=label)
        else:
            left.plot(x, y, color=colour, marker="x", linestyle="none", markersize=8, label=label)
    left.set_yscale("log", base=2)
    left.set_xlabel("epsilon")
    left.set_ylabel(f"d where GRR's MSE = {other.upper()}'s")
    left.set_title("crossover along d (GRR better below)", fontsize=10)
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    ds = np.geomspace(8, 2**14, 200)
    right.plot(ds, np.log((ds - 2) / 3), color="black", linewidth=1, label="[W17] Var*: eps* = ln((d - 2) / 3)")
    right.plot(
        ds,
        [w17.mse_crossover_epsilon(d) for d in ds],
        color="grey",
        linestyle="--",
        linewidth=1,
        label="expected MSE (f_v terms), GRR vs OUE",
    )
    for label, key, colour in (
        ("theory columns", "theory", "tab:blue"),
        ("measured (95% bootstrap)", "measured", "tab:red"),
    ):
        pts = [r for r in along_eps if math.isfinite(r[key])]
        x = [r["d"] for r in pts]
        y = [r[key] for r in pts]
        if key == "measured":
            err = [[r[key] - r["low"] for r in pts], [r["high"] - r[key] for r in pts]]
            right.errorbar(x, y, yerr=err, color=colour, marker="o", linestyle="none", capsize=3, label=label)
        else:
            right.plot(x, y, color=colour, marker="x", linestyle="none", markersize=8, label=label)
    right.set_xscale("log", base=2)
    right.set_xlabel("domain size d")
    right.set_ylabel(f"eps where GRR's MSE = {other.upper()}'s")
    right.set_title("crossover along eps (GRR better above)", fontsize=10)
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    fig.suptitle(f"[W17] §4 (comparison): where GRR overtakes {other.upper()}", fontsize=10)
    fig.tight_layout()
    path = out / "crossover.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def ratio_table(lb: pl.DataFrame) -> str:
    lines = [
        "| oracle | cells | measured / own formula: mean | min | max | cells with \\|z\\| > 3 | max \\|z\\| "
        "| measured / [W17] Var*: mean | min | max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for oracle in oracles_of(lb):
        r = _cell(lb, oracle)
        paper = (r["mean"] / r["paper"]).to_numpy()
        has_paper = bool(np.all(np.isfinite(paper)))
        z = np.abs(r["z"].to_numpy())
        lines.append(
            f"| {oracle} | {r.height} | {r['ratio'].mean():.4f} | {r['ratio'].min():.3f} | {r['ratio'].max():.3f} "
            f"| {int((z > 3).sum())} | {z.max():.2f} | "
            + (f"{paper.mean():.4f} | {paper.min():.3f} | {paper.max():.3f} |" if has_paper else "not in [W17] | | |")
        )
    return "\n".join(lines)


def ratio_by_eps(lb: pl.DataFrame, d: int) -> str:
    eps = sorted(lb["epsilon"].unique().to_list())
    lines = ["| oracle | " + " | ".join(f"ε={e:g}" for e in eps) + " |", "|---|" + "---:|" * len(eps)]
    for oracle in oracles_of(lb):
        cells = []
        for e in eps:
            r = _cell(lb, oracle, d=d, epsilon=e)
            cells.append(f"{r['ratio'][0]:.3f}" if r.height else "—")
        lines.append(f"| {oracle} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _significantly(a: dict, b: dict) -> int:
    """+1 when a's mean is above b's by more than 3 combined standard errors, -1 below, 0 else."""
    gap = a["mean"] - b["mean"]
    noise = 3 * math.hypot(a["stderr"], b["stderr"])
    return 1 if gap > noise else -1 if gap < -noise else 0


def orderings(lb: pl.DataFrame) -> str:
    present = set(oracles_of(lb))
    by_cell = {(r["oracle"], r["d"], r["epsilon"]): r for r in lb.iter_rows(named=True)}
    cells = sorted({(d, e) for (_, d, e) in by_cell})
    lines = ["| [W17] says | measured over the (d, ε) cells of this run | holds? |", "|---|---|---|"]
    if {"oue", "olh"} <= present:
        ratio = np.array([by_cell["oue", d, e]["mean"] / by_cell["olh", d, e]["mean"] for d, e in cells])
        theory = np.array([by_cell["oue", d, e]["theory"] / by_cell["olh", d, e]["theory"] for d, e in cells])
        differ = sum(_significantly(by_cell["oue", d, e], by_cell["olh", d, e]) != 0 for d, e in cells)
        lines.append(
            f"| OUE and OLH have the same variance, 4e^ε/(e^ε−1)² (§4.3, §4.4) | OUE/OLH measured MSE: mean "
            f"{ratio.mean():.3f}, range {ratio.min():.3f}–{ratio.max():.3f}; significantly different (3 SE) in "
            f"{differ} of {len(cells)} cells; own formulas' ratio {theory.min():.3f}–{theory.max():.3f} (OLH's "
            f"integer g = round(e^ε)+1 and the f_v terms) | {'yes' if abs(ratio.mean() - 1) < 0.02 else 'no'} |"
        )
    for worse in WORSE_THAN_OUE_OLH:
        if worse not in present or not {"oue", "olh"} <= present:
            continue
        both = sum(
            _significantly(by_cell[worse, d, e], by_cell["oue", d, e]) > 0
            and _significantly(by_cell[worse, d, e], by_cell["olh", d, e]) > 0
            for d, e in cells
        )
        better = sum(
            _significantly(by_cell[worse, d, e], by_cell["oue", d, e]) < 0
            or _significantly(by_cell[worse, d, e], by_cell["olh", d, e]) < 0
            for d, e in cells
        )
        factor = np.array([by_cell[worse, d, e]["mean"] / by_cell["oue", d, e]["mean"] for d, e in cells])
        lines.append(
            f"| {worse.upper()} is worse than OUE and OLH (Table 1) | significantly worse than both in {both} of "
            f"{len(cells)} cells, better than either in {better}; MSE ×{factor.min():.2f}–×{factor.max():.2f} "
            f"of OUE's | {'yes' if better == 0 else 'no'} |"
        )
    if {"hr", "blh"} <= present:
        ratio = np.array([by_cell["hr", d, e]["mean"] / by_cell["blh", d, e]["mean"] for d, e in cells])
        lines.append(
            f"| (not in [W17]) HR has BLH's variance (p* = e^ε/(e^ε+1), q* = 1/2) | HR/BLH measured: mean "
            f"{ratio.mean():.3f}, range {ratio.min():.3f}–{ratio.max():.3f} | "
            f"{'yes' if abs(ratio.mean() - 1) < 0.02 else 'no'} |"
        )
    if "grr" in present:
        ds = sorted({d for d, _ in cells})
        eps_all = sorted({e for _, e in cells})
        growth = {
            oracle: [by_cell[oracle, ds[-1], e]["mean"] / by_cell[oracle, ds[0], e]["mean"] for e in eps_all]
            for oracle in sorted(present & set(w17.PAPER_VAR))
        }
        # at d = 64 one cell's MSE has a standard error of ~5% (20 repeats): 1.25 is "flat" within noise
        flat = all(max(v) <= 1.25 for k, v in growth.items() if k != "grr")
        lines.append(
            f"| DE's (GRR's) variance grows linearly in d; the others' do not depend on d (§4, Table 1) "
            f"| MSE at d = {ds[-1]} over MSE at d = {ds[0]}, range over ε: "
            + "; ".join(f"{k} ×{min(v):.2g}–×{max(v):.2g}" for k, v in growth.items())
            + " (below 1: the f_v term, 1/d on average, fades as d grows; up to ×1.25 is noise at d = 64) "
            f"| {'yes' if min(growth['grr']) > 10 and flat else 'no'} |"
        )
    if {"grr", "olh", "oue"} <= present:
        agree = exact = 0
        disagree = []
        for d, e in cells:
            grr_better = by_cell["grr", d, e]["mean"] < min(by_cell["oue", d, e]["mean"], by_cell["olh", d, e]["mean"])
            agree += grr_better == (d < w17.crossover_domain(e))
            exact += grr_better == (d < w17.mse_crossover_domain(e))
            if grr_better != (d < w17.crossover_domain(e)):
                disagree.append(f"d = {d}, ε = {e:g}")
        lines.append(
            f"| GRR beats OUE and OLH exactly when d < 3e^ε + 2 (§4, comparison) | the measured winner of GRR vs "
            f"min(OUE, OLH) follows the rule in {agree} of {len(cells)} cells"
            + (f" (not at {'; '.join(disagree)})" if disagree else "")
            + f"; it follows the expected-MSE crossover (f_v terms included) in {exact} of {len(cells)} | "
            f"{'yes' if agree == len(cells) else 'yes, up to the f_v terms' if exact == len(cells) else 'mostly'} |"
        )
    return "\n".join(lines)


def crossover_tables(along_d: list[dict], along_eps: list[dict], other: str) -> str:
    def where(r: dict, key: str, note_key: str) -> str:
        if math.isfinite(r[key]):
            return f"{r[key]:.1f}" if key != "closed" or r[key] > 10 else f"{r[key]:.2f}"
        return {"below": "below the grid", "above": "above the grid"}.get(r[note_key], "—")

    lines = [
        f"Along d (GRR better below d*), GRR vs {other.upper()}:",
        "",
        "| ε | [W17] d* = 3e^ε + 2 | expected MSE, vs OUE | theory columns | measured | 95% bootstrap |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in along_d:
        boot = f"{r['low']:.1f}–{r['high']:.1f}" if math.isfinite(r["low"]) else "—"
        if r["missing"]:
            boot += f" ({r['missing']} draws left the grid)"
        lines.append(
            f"| {r['epsilon']:g} | {r['closed']:.1f} | {r['exact']:.1f} | {where(r, 'theory', 'theory_note')} "
            f"| {where(r, 'measured', 'note')} | {boot} |"
        )
    lines += [
        "",
        f"Along ε (GRR better above ε*), GRR vs {other.upper()}:",
        "",
        "| d | [W17] ε* = ln((d − 2)/3) | expected MSE, vs OUE | theory columns | measured | 95% bootstrap |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in along_eps:
        boot = f"{r['low']:.2f}–{r['high']:.2f}" if math.isfinite(r["low"]) else "—"
        if r["missing"]:
            boot += f" ({r['missing']} draws left the grid)"
        th = f"{r['theory']:.2f}" if math.isfinite(r["theory"]) else where(r, "theory", "theory_note")
        me = f"{r['measured']:.2f}" if math.isfinite(r["measured"]) else where(r, "measured", "note")
        lines.append(f"| {r['d']} | {r['closed']:.2f} | {_fmt(r['exact'], 3)} | {th} | {me} | {boot} |")
    return "\n".join(lines)


def best_table(lb: pl.DataFrame) -> str:
    eps = sorted(lb["epsilon"].unique().to_list())
    ds = sorted(lb["d"].unique().to_list())
    lines = ["| d \\ ε | " + " | ".join(f"{e:g}" for e in eps) + " |", "|---|" + "---|" * len(eps)]
    for d in ds:
        cells = []
        for e in eps:
            block = lb.filter((pl.col("d") == d) & (pl.col("epsilon") == e)).sort("mean")
            best = block.row(0, named=True)
            tied = [
                r["oracle"]
                for r in block.iter_rows(named=True)
                if r["oracle"] != best["oracle"] and _significantly(r, best) == 0
            ]
            cells.append(best["oracle"] + (f" (≈ {', '.join(tied)})" if tied else ""))
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report_blocks(lb: pl.DataFrame, along_d: list[dict], along_eps: list[dict], other: str) -> dict[str, str]:
    """The generated parts of reports/wang2017_oracles.md, by marker name."""
    return {
        "oracles": ", ".join(oracles_of(lb)),
        "repeats": ", ".join(map(str, sorted(lb["repeats"].unique().to_list()))),
        "ratio": ratio_table(lb) + "\n\nmeasured / own formula at d = 1024:\n\n" + ratio_by_eps(lb, 1024),
        "orderings": orderings(lb),
        "crossovers": crossover_tables(along_d, along_eps, other),
    }


def fill_report(path: Path, blocks: dict[str, str]) -> None:
    """Replace the text between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` for every block."""
    text = path.read_text(encoding="utf-8")
    for name, content in blocks.items():
        begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
        if text.count(begin) != 1 or text.count(end) != 1:
            raise SystemExit(f"{path}: needs exactly one {begin} ... {end} pair")
        head, rest = text.split(begin)
        _, tail = rest.split(end)
        inline = "\n" not in content
        text = head + begin + (content if inline else "\n" + content + "\n") + end + tail
    path.write_text(text, encoding="utf-8")


def tables(lb: pl.DataFrame, along_d: list[dict], along_eps: list[dict], other: str, results: list[Path]) -> str:
    n = sorted(lb["n"].unique().to_list())
    reps = sorted(lb["repeats"].unique().to_list())
    return "\n".join(
        [
            f"<!-- generated by scripts/plot_wang2017.py from {', '.join(map(str, results))}; do not edit by hand -->",
            f"Oracles: {', '.join(oracles_of(lb))}; n = {', '.join(map(str, n))}; repeats per cell: "
            f"{', '.join(map(str, reps))}.",
            "",
            "## Measured MSE over analytic variance, every cell",
            "",
            "`own formula` is the oracle's exact variance (`Oracle.variance`, with the f_v term and the integer "
            "parameters it runs with), the run's `theory` column; `[W17] Var*` is the paper's closed form (no "
            "f_v term, real-valued optimum g for OLH). z = (measured − theory) / standard error.",
            "",
            ratio_table(lb),
            "",
            "### measured / own formula at d = 1024",
            "",
            ratio_by_eps(lb, 1024),
            "",
            "## The orderings [W17] states",
            "",
            orderings(lb),
            "",
            "## Crossover points",
            "",
            crossover_tables(along_d, along_eps, other),
            "",
            "## Lowest measured MSE per cell",
            "",
            "(≈: not significantly worse than the best at 3 combined standard errors)",
            "",
            best_table(lb),
            "",
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="results folders (runs of the [W17] specs)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the figures and tables.md")
    parser.add_argument("--report", type=Path, help="write-up whose generated blocks to rewrite")
    args = parser.parse_args(argv[1:])
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    lb, rows = leaderboard(args.results)
    print("wrote", plot_curves(lb, "epsilon", PANEL_DOMAINS, out))
    print("wrote", plot_curves(lb, "d", PANEL_EPSILONS, out))
    print("wrote", plot_ratios(lb, out))
    other = "olh"
    along_d, along_eps = crossovers(lb, rows, other)
    print("wrote", plot_crossover(along_d, along_eps, other, out))
    (out / "tables.md").write_text(tables(lb, along_d, along_eps, other, args.results), encoding="utf-8")
    print("wrote", out / "tables.md")
    if args.report:
        fill_report(args.report, report_blocks(lb, along_d, along_eps, other))
        print("updated", args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
