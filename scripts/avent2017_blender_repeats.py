"""Tables for reports/avent2017_blender.md from specs/avent2017_blender_repeats.yaml (100 repeats).

    nice -n 10 .venv/bin/ldpbench run specs/avent2017_blender_repeats.yaml --out results/avent2017_blender_repeats
    .venv/bin/python scripts/avent2017_blender_repeats.py [results/avent2017_blender_repeats]

For every dataset, head-list size M and Blender output (opt-in, client, blended): each NDCG@10
variant (query ranking by the protocol's query estimates or by summed record estimates; ideal of
the covered records or the true global top 10) as mean ± standard error over the repeats, the
share of repeats below 0.97 and the 10% quantile (the lower tail that 10 repeats cannot show),
and L1 of the head list.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl

from ldpbench.store import ResultsStore

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
    df = ResultsStore(folder).load().filter(pl.col("error").is_null())
    # the spec's budget (rows of other budgets from an earlier, wider version of the spec are ignored)
    df = df.filter(pl.col("epsilon") == EPSILON)
    metrics = set(df["metric"].unique().to_list())
    keys = df.select("dataset", "oracle").unique(maintain_order=True).sort(["dataset", "oracle"])
    for ds in keys["dataset"].unique(maintain_order=True).to_list():
        print(f"\n### {ds}\n")
        head = ["M", "estimate", "repeats"] + [label for metric, label in COLUMNS if metric in metrics] + ["L1"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for oracle in sorted(keys.filter(pl.col("dataset") == ds)["oracle"].to_list(), key=lambda o: ("head_list_size=50" in o, o)):
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
