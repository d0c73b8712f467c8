"""Tables for reports/avent2017_blender.md from specs/avent2017_blender_repeats.yaml (100 repeats).

    nice -n 10 .venv/bin/ldpbench run specs/avent2017_blender_repeats.yaml --out results/avent2017_blender_repeats
    .venv/bin/python scripts/avent2017_blender_repeats.py [results/avent2017_blender_repeats]

For every dataset, head-list size M and Blender output (opt-in, client, blended): each NDCG@10
variant (query ranking by the protocol's query estimates or by summed record estimates; ideal of
the covered records or the true global top 10) as mean ± standard error over the repeats, the
share of repeats below 0.97 and the 10% quantile (the lower tail that 10 repeats cannot show),
and L1 of the head list, at eps = 4; then the eps sweep (eps = 1 .. 5, [A17] Fig. 15/16 at 5%
opt-in): [A17]'s list-of-lists NDCG@10 and L1 per eps, M and output, over the same 100 repeats.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl

from ldpbench.results.read import read_run

EPSILON = 4.0
COLUMNS = [
    ("ndcg(k=10,structure=list-of-lists)", "list of lists, protocol query scores"),
    ("ndcg(k=10,structure=list-of-lists,query_scores=sum)", "list of lists, summed record scores"),
    ("ndcg(k=10,structure=list-of-lists,ideal=global)", "list of lists, global ideal"),
    ("ndcg(k=10,structure=queries)", "queries, protocol"),
    ("ndcg(k=10,structure=queries,query_scores=sum)", "queries, summed"),
    ("ndcg(k=10)", "records"),
    ("ndcg(k=10,ideal=global)", "records, global ideal"),
]


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "results/avent2017_blender_repeats")
    everything = read_run(folder).rows.filter(pl.col("error").is_null())
    df = everything.filter(pl.col("epsilon") == EPSILON)
    metrics = set(df["metric"].unique().to_list())
    keys = df.select("dataset", "oracle").unique(maintain_order=True).sort(["dataset", "oracle"])
    for ds in keys["dataset"].unique(maintain_order=True).to_list():
        print(f"\n### {ds}\n")
        head = ["M", "estimate", "repeats"] + [label for metric, label in COLUMNS if metric in metrics] + ["L1"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for oracle in sorted(
            keys.filter(pl.col("dataset") == ds)["oracle"].to_list(), key=lambda o: ("head_list_size=50" in o, o)
        ):
            rows = df.filter((pl.col("dataset") == ds) & (pl.col("oracle") == oracle))
            m = "50" if "head_list_size=50" in oracle else "10"
            cells = [m, oracle.rsplit(":", 1)[-1]]
            first = True
            for metric, _ in COLUMNS:
                if metric not in metrics:
                    continue
                v = rows.filter(pl.col("metric") == metric)["value"].to_numpy()
                v = v[np.isfinite(v)]
                if first:
                    cells.append(str(v.size))
                    first = False
                cell = f"{v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(v.size):.3f}"
                if metric.startswith("ndcg(k=10,structure=list-of-lists"):
                    cell += f" (<0.97: {100 * np.mean(v < 0.97):.0f}%, q10 {np.quantile(v, 0.1):.3f})"
                cells.append(cell)
            l1 = rows.filter(pl.col("metric") == f"l1(top={m})")["value"].to_numpy()
            cells.append(f"{l1.mean():.3f} ± {l1.std(ddof=1) / np.sqrt(l1.size):.3f}")
            print("| " + " | ".join(cells) + " |")
    eps_sweep(everything)
    return 0


def _mean_se(v: np.ndarray) -> str:
    v = v[np.isfinite(v)]
    return f"{v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(v.size):.3f}"


def eps_sweep(df: pl.DataFrame) -> None:
    """Per dataset: rows (M, output), columns eps: list-of-lists NDCG@10 (share < 0.97) and L1."""
    ndcg = "ndcg(k=10,structure=list-of-lists)"
    epsilons = sorted(df["epsilon"].unique().to_list())
    for ds in sorted(df["dataset"].unique().to_list()):
        sub = df.filter(pl.col("dataset") == ds)
        print(
            f"\n### {ds}: eps sweep at 5% opt-in (list-of-lists NDCG@10, share of repeats < 0.97; L1 of the head list)\n"
        )
        head = ["M", "estimate", "repeats"] + [f"ε = {e:g}" for e in epsilons]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for oracle in sorted(sub["oracle"].unique().to_list(), key=lambda o: ("head_list_size=50" in o, o)):
            m = "50" if "head_list_size=50" in oracle else "10"
            rows = sub.filter(pl.col("oracle") == oracle)
            reps = {e: rows.filter((pl.col("epsilon") == e) & (pl.col("metric") == ndcg)).height for e in epsilons}
            cells = [
                m,
                oracle.rsplit(":", 1)[-1],
                "/".join(str(reps[e]) for e in epsilons) if len(set(reps.values())) > 1 else str(reps[epsilons[0]]),
            ]
            for e in epsilons:
                at = rows.filter(pl.col("epsilon") == e)
                v = at.filter(pl.col("metric") == ndcg)["value"].to_numpy()
                l1 = at.filter(pl.col("metric") == f"l1(top={m})")["value"].to_numpy()
                if v.size == 0:
                    cells.append("not run")
                    continue
                cells.append(f"{_mean_se(v)} ({100 * np.mean(v < 0.97):.0f}%); L1 {_mean_se(l1)}")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
