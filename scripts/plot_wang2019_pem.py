"""The figure and tables of reports/wang2019_pem.md from the two results folders of the PEM reproduction.

    .venv/bin/ldpbench run specs/wang2019_pem.yaml
    .venv/bin/ldpbench run specs/wang2019_pem_fo.yaml
    .venv/bin/python scripts/plot_wang2019_pem.py [results/wang2019_pem] [results/wang2019_pem_fo] [reports/wang2019_pem.png]
        [--one-group R]

Three panels: F1 and NCR of the identified top-32 against epsilon (PEM at every eta, splitting the
budget, TreeHist, and the known-candidate-list baseline of the companion spec), and F1 against k
(PEM, eta = 4, with the noise-free diagnostic below). Every point is a mean over repeats with +-1 standard-error bars. Prints the report's
tables (mean +- standard error) in Markdown.

``--one-group R`` adds a **diagnostic** that is not a method and never a leaderboard row: PEM's last
round as if every one of the 120,978 queries present were a candidate, i.e. OLH estimates of every
query from one group of n / r users (r = PEM's number of rounds at that eta), top 32 with a positive
estimate, on R draws per (eps, eta) (``default_rng(2019)``). It isolates what the group size alone
costs: no pruning in earlier rounds, but the same noise per estimate as PEM's final round. The group's
holder counts are drawn from their exact marginal (hypergeometric) law, the support counts from
the binomials of docs/heavy-hitters.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: leaderboard label -> (legend, colour, marker); the rows of the epsilon panels, in this order
LINES = {
    "pem(k=32,step_bits=8):top-k": ("PEM, eta = 8", "tab:blue", "o"),
    "pem(k=32,step_bits=6):top-k": ("PEM, eta = 6", "tab:cyan", "s"),
    "pem(k=32):top-k": ("PEM, eta = 4", "tab:green", "D"),
    "pem(k=32,step_bits=2):top-k": ("PEM, eta = 2", "tab:olive", "^"),
    "pem(k=32,step_bits=1):top-k": ("PEM, eta = 1 (reference code)", "tab:orange", "v"),
    "pem(k=32,split=budget):top-k": ("PEM, eta = 4, budget split", "tab:red", "x"),
    "treehist(k=32):top-k": ("TreeHist", "tab:purple", "P"),
    "fo-threshold(k=32):top-k": ("OLH over the 120,978 queries present (knows the list)", "gray", "*"),
}
#: PEM at eta = 4 by k
BY_K = {16: "pem(k=16):top-k", 32: "pem(k=32):top-k", 64: "pem(k=64):top-k"}


def load(*folders: Path) -> dict[tuple[str, float, str], tuple[float, float]]:
    """(oracle, epsilon, metric) -> (mean, standard error) over the leaderboards of the folders."""
    rows = {}
    for folder in folders:
        for r in json.loads((folder / "leaderboard.json").read_text(encoding="utf-8")):
            if r["failed"]:
                raise SystemExit(f"{folder}: {r['oracle']} eps {r['epsilon']} {r['metric']}: {r['failed']} failed rows")
            rows[(r["oracle"], float(r["epsilon"]), r["metric"])] = (r["mean"], r["stderr"])
    return rows


def fmt(cell: tuple[float, float] | None, digits: int = 3) -> str:
    if cell is None:
        return "–"
    mean, se = cell
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def tables(rows, epsilons: list[float]) -> str:
    out = []
    for metric in ("topk-f1", "ncr", "topk-precision", "topk-recall"):
        out.append(f"\n{metric} (mean ± standard error over repeats)\n")
        out.append("| method | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")
        out.append("|---|" + "---|" * len(epsilons))
        for label, (legend, *_rest) in LINES.items():
            if any((label, e, metric) in rows for e in epsilons):
                cells = " | ".join(fmt(rows.get((label, e, metric))) for e in epsilons)
                out.append(f"| {legend} | {cells} |")
    out.append("\nPEM (eta = 4) against k: F1 / NCR\n")
    out.append("| k | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")
    out.append("|---|" + "---|" * len(epsilons))
    for k, label in BY_K.items():
        cells = " | ".join(
            f"{fmt(rows.get((label, e, 'topk-f1')))} / {fmt(rows.get((label, e, 'ncr')))}" for e in epsilons
        )
        out.append(f"| {k} | {cells} |")
    out.append("\nbits per user\n")
    for label, (legend, *_rest) in LINES.items():
        bits = [rows.get((label, e, "bits-per-user")) for e in epsilons]
        if any(bits):
            out.append(f"- {legend}: " + ", ".join(f"{b[0]:g}" if b else "–" for b in bits))
    return "\n".join(out)


def plot(rows, epsilons: list[float], out: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, metric, title in ((axes[0], "topk-f1", "F1 of the top 32"), (axes[1], "ncr", "NCR of the top 32")):
        for label, (legend, colour, marker) in LINES.items():
            pts = [(e, *rows[(label, e, metric)]) for e in epsilons if (label, e, metric) in rows]
            if pts:
                xs, ms, ses = zip(*pts)
                dashed = label.startswith("fo-threshold")
                ax.errorbar(
                    xs,
                    ms,
                    yerr=ses,
                    label=legend,
                    color=colour,
                    marker=marker,
                    capsize=3,
                    linestyle="--" if dashed else "-",
                    linewidth=1.2,
                    markersize=5,
                )
        ax.set(title=f"AOL queries (48-bit), {title}", xlabel="ε", ylabel=metric, ylim=(-0.03, 1.03))
        ax.grid(alpha=0.3)
    ax = axes[2]
    for i, e in enumerate(epsilons):
        pts = [(k, *rows[(label, e, "topk-f1")]) for k, label in BY_K.items() if (label, e, "topk-f1") in rows]
        if pts:
            ks, ms, ses = zip(*pts)
            ax.errorbar(
                ks,
                ms,
                yerr=ses,
                label=f"ε = {e:g}",
                marker="o",
                capsize=3,
                color=plt.cm.viridis(i / max(1, len(epsilons) - 1)),
            )
    ceiling = [noise_free(k, 4) for k in BY_K]
    ax.plot(
        list(BY_K),
        ceiling,
        color="black",
        linestyle=":",
        marker="_",
        markersize=14,
        label="noise-free PEM (diagnostic)",
    )
    ax.set(title="PEM (eta = 4): F1 against k", xlabel="k", ylabel="topk-f1", ylim=(-0.03, 1.03))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(list(BY_K), [str(k) for k in BY_K])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("PEM (Wang, Li & Jha, TDSC 2019) on the AOL queries, n = 657,427: ldpbench, mean ± 1 SE")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def rounds(eta: int, k: int = 32, bits: int = 48) -> int:
    """PEM's number of rounds r = 1 + ceil((m - l_0) / eta), l_0 = floor(log2 k) + 1 (docs/heavy-hitters.md)."""
    start = k.bit_length()  # floor(log2 k) + 1
    return 1 + -(-(bits - start) // eta)


def one_group(repeats: int, epsilons: list[float], k: int = 32) -> str:
    """F1 of the top k from one group of n / r users estimating every query present (the diagnostic above)."""
    import numpy as np

    from ldpbench import build_plugins

    pop = build_plugins().create("dataset", "aol-queries", {}).load(np.random.default_rng(0))
    counts = np.asarray(pop.counts, dtype=np.int64)
    n = int(counts.sum())
    truth = set(np.argsort(-counts, kind="stable")[:k].tolist())
    rng = np.random.default_rng(2019)
    out = [
        f"\nDiagnostic (not a method): PEM's last round with every query present as a candidate, {repeats} draws each\n"
    ]
    out.append("| eta (rounds r, users per group) | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")
    out.append("|---|" + "---|" * len(epsilons))
    for eta in (1, 2, 4, 6, 8):
        r = rounds(eta, k)
        group = n // r
        cells = []
        for eps in epsilons:
            g = int(round(np.exp(eps))) + 1
            p, q = np.exp(eps) / (np.exp(eps) + g - 1), 1.0 / g
            f1s = []
            for _ in range(repeats):
                held = rng.hypergeometric(counts, n - counts, group)  # each query's holders in the group
                support = rng.binomial(held, p) + rng.binomial(group - held, q)
                est = (support - group * q) / (p - q)
                top = np.argsort(-est, kind="stable")[:k]
                found = [int(i) for i in top if est[i] > 0]
                hit = len(truth.intersection(found))
                prec, rec = (hit / len(found) if found else 1.0), hit / k
                f1s.append(0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec))
            f1s = np.asarray(f1s)
            cells.append(f"{f1s.mean():.3f} ± {f1s.std(ddof=1) / np.sqrt(repeats):.3f}")
        out.append(f"| {eta} ({r}, {group:,}) | " + " | ".join(cells) + " |")
    return "\n".join(out)


def noise_free(k: int, eta: int, bits: int = 48) -> float:
    """F1 of PEM with every round's estimates replaced by the exact prefix counts of the whole population.

    What the prefix pruning alone loses: a top-k item whose prefix is not among the top-k prefixes of
    some round (prefixes of many mid-frequency queries outweigh it) is gone whatever the budget.
    """
    import numpy as np

    from ldpbench import build_plugins

    pop = build_plugins().create("dataset", "aol-bits", {}).load(np.random.default_rng(0))
    items, counts = np.asarray(pop.items, dtype=np.uint64), np.asarray(pop.counts, dtype=np.int64)
    order = np.lexsort((items, -counts))  # count descending, ties by the smaller item
    truth = set(items[order[:k]].tolist())
    kept, prev = None, 0
    length = k.bit_length()
    while True:
        pre = items >> np.uint64(bits - length)
        if kept is not None:  # candidates: extensions of the kept prefixes
            mask = np.isin(pre >> np.uint64(length - prev), kept)
            pre_c, counts_c = pre[mask], counts[mask]
        else:
            pre_c, counts_c = pre, counts
        uniq, inverse = np.unique(pre_c, return_inverse=True)
        sums = np.bincount(inverse, weights=counts_c)
        top = np.lexsort((uniq, -sums))[:k]
        kept, prev = uniq[top], length
        if length == bits:
            break
        length = min(bits, length + eta)
    hit = len(truth.intersection(kept.tolist()))
    return hit / k  # k items returned, so precision = recall = F1


def main(argv: list[str]) -> None:
    repeats = 0
    if "--one-group" in argv:
        at = argv.index("--one-group")
        repeats = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    main_dir = Path(argv[0]) if len(argv) > 0 else ROOT / "results" / "wang2019_pem"
    fo_dir = Path(argv[1]) if len(argv) > 1 else ROOT / "results" / "wang2019_pem_fo"
    out = Path(argv[2]) if len(argv) > 2 else ROOT / "reports" / "wang2019_pem.png"
    rows = load(main_dir, fo_dir)
    epsilons = sorted({e for (_o, e, _m) in rows})
    print(tables(rows, epsilons))
    if repeats:
        print(one_group(repeats, epsilons))
    print("\nDiagnostic (not a method): F1 of noise-free PEM (exact prefix counts in every round)\n")
    print("| k | " + " | ".join(f"eta = {eta}" for eta in (1, 2, 4, 6, 8)) + " |")
    print("|---|" + "---|" * 5)
    for k in (16, 32, 64):
        print(f"| {k} | " + " | ".join(f"{noise_free(k, eta):.3f}" for eta in (1, 2, 4, 6, 8)) + " |")
    plot(rows, epsilons, out)


if __name__ == "__main__":
    main(sys.argv[1:])
