"""Figure 7 of [JG19] from a run of specs/jia2019_calibrate.yaml, and the improvement table.

Usage: ``python scripts/plot_jia2019_calibrate.py [results/jia2019_calibrate] [reports/jia2019_calibrate.png] [--ceiling R]``

Prints the relative improvement of OUE-Calibrate over OUE-Zero under both definitions the paper's
figures admit -- (Z - C)/Z (the share of OUE-Zero's error removed) and (Z - C)/C = Z/C - 1 -- with
Z, C the mean MSE over repeats and standard errors from the paired per-repeat differences, and
the MSE of Calibrate + zeroing under both ``zero_rule`` readings.

``--ceiling R`` adds a **diagnostic** that is not a method and never a leaderboard row: Calibrate
with the *true* histogram of Retail's counts as its prior (the best prior any fit could find;
posterior mean under the empirical law of the true counts), on R fresh OUE runs per epsilon
(``default_rng(2019)``), against OUE-Zero on the same runs.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ldpbench.results.read import read_run  # noqa: E402

ZERO, CAL, MLE = "base-cut", "calibrate(prior=power-law)", "calibrate(prior=power-law,fit=mle)"
ZERO_CAL = "calibrate(prior=power-law,zero_below=significance)"
ZERO_RAW = "calibrate(prior=power-law,zero_below=significance,zero_rule=raw)"
LABELS = {"base-cut": "OUE-Zero", CAL: "OUE-Calibrate (mean-variance)", MLE: "OUE-Calibrate (MLE fit)"}
TITLES = {"retail": "Retail (complete)", "zipf(d=41270,n=8019015,s=1)": "Kosarak-shaped stand-in (synthetic Zipf s=1)"}


def improvements(zero: np.ndarray, cal: np.ndarray) -> str:
    """Both definitions of Calibrate's improvement over OUE-Zero, with paired standard errors."""
    z, c = zero.mean(), cal.mean()
    se_diff = np.std(zero - cal, ddof=1) / np.sqrt(zero.size)
    return (
        f"(Z-C)/Z {100 * (z - c) / z:6.1f}% ± {100 * se_diff / z:.1f}   "
        f"(Z-C)/C {100 * (z - c) / c:6.1f}% ± {100 * se_diff / c:.1f}  (T={zero.size})"
    )


def true_prior_posterior_mean(x: np.ndarray, truth: np.ndarray, sigma: float, block: int = 2048) -> np.ndarray:
    """Posterior mean of each count-scale estimate under the empirical law of the true counts."""
    values, weights = np.unique(truth, return_counts=True)
    logw = np.log(weights.astype(float))
    out = np.empty(x.size)
    for start in range(0, x.size, block):  # blocks of estimates: never a d x d array
        xs = x[start : start + block, None]
        lw = logw[None, :] - (xs - values[None, :]) ** 2 / (2 * sigma * sigma)
        lw -= lw.max(axis=1, keepdims=True)
        w = np.exp(lw)
        out[start : start + block] = (w * values[None, :]).sum(axis=1) / w.sum(axis=1)
    return out


def ceiling(repeats: int) -> None:
    """The true-histogram-prior diagnostic on Retail (see the module docstring)."""
    from ldpbench import build_plugins
    from ldpbench.engine.simulate import simulate

    plugins = build_plugins()
    pop = plugins.create("dataset", "retail", {}).load(np.random.default_rng(0))
    rng = np.random.default_rng(2019)
    cut = plugins.create("postprocessor", "base-cut", {})
    print("Retail, Calibrate with the TRUE histogram as prior (diagnostic, not a method):")
    for eps in (1, 2, 3, 4, 5):
        oracle = plugins.create("oracle", "oue", {}, d=pop.d, epsilon=float(eps))
        zs, cs = [], []
        for _ in range(repeats):
            est = simulate(oracle, pop.counts, rng, "aggregate")
            n = est.n
            sigma = float(np.sqrt(est.variance[0])) * n
            zero = cut.apply(est, rng).frequencies * n
            cal = true_prior_posterior_mean(est.frequencies * n, pop.counts, sigma)
            zs.append(np.mean((zero - pop.counts) ** 2))
            cs.append(np.mean((cal - pop.counts) ** 2))
        print(f"  eps={eps} true-prior ceiling " + improvements(np.array(zs), np.array(cs)))


def main(argv: list[str]) -> int:
    if "--ceiling" in argv:
        at = argv.index("--ceiling")
        ceiling(int(argv[at + 1]))
        argv = argv[:at] + argv[at + 2 :]
    folder = Path(argv[0] if argv else "results/jia2019_calibrate")
    out = Path(argv[1] if len(argv) > 1 else "reports/jia2019_calibrate.png")
    values: dict = defaultdict(dict)  # (dataset, eps, pipeline) -> {repeat: mse}
    for row in read_run(folder).rows.iter_rows(named=True):  # the spec's current cells only
        if row["metric"] == "mse(scale=count)" and row["error"] is None:
            values[(row["dataset"], row["epsilon"], row["pipeline"])][row["repeat"]] = row["value"]
    datasets = sorted({k[0] for k in values}, key=lambda s: s != "retail")
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 4.0))
    for ax, ds in zip(np.atleast_1d(axes), datasets):
        eps = sorted({k[1] for k in values if k[0] == ds})
        for pipe, style in ((ZERO, "s--"), (CAL, "o-"), (MLE, "^:")):
            means = [np.mean(list(values[(ds, e, pipe)].values())) for e in eps]
            ax.plot(eps, means, style, label=LABELS[pipe])
        ax.set_yscale("log")
        ax.set_xlabel("privacy budget ε")
        ax.set_ylabel("estimation error (MSE, counts²)")
        ax.set_title(TITLES.get(ds, ds), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        print(f"{ds}:")
        for e in eps:
            z, c, m = (values[(ds, e, p)] for p in (ZERO, CAL, MLE))
            reps = sorted(set(z) & set(c) & set(m))
            zz, cc, mm = (np.array([v[r] for r in reps]) for v in (z, c, m))
            for name, arr in (("mean-variance", cc), ("mle", mm)):
                print(f"  eps={e:g} {name:13s} " + improvements(zz, arr))
            for name, pipe in (("zero calibrated<=T", ZERO_CAL), ("zero raw<T", ZERO_RAW)):
                v = values.get((ds, e, pipe), {})
                if v:
                    arr = np.array(list(v.values()))
                    print(
                        f"  eps={e:g} {name:18s} MSE {arr.mean():.4g} ± {arr.std(ddof=1) / np.sqrt(arr.size):.2g} (T={arr.size})"
                    )
    fig.suptitle(
        "[JG19] Fig. 7 reproduced: OUE-Zero vs OUE-Calibrate (OUE itself is orders of magnitude worse)", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
