"""PGR against Subset Selection, Hadamard Response and OLH: the variance from each oracle's constants
at d = 2^10..2^16 and eps in {1, 2, 4}, and the MSE measured at one point.

    .venv/bin/python scripts/pgr_comparison.py            # both tables (about a minute)
    .venv/bin/python scripts/pgr_comparison.py --formulas # the first table only

Variances are n Var[f_hat_v] without the f_v term, q*(1 - q*)/(p* - q*)^2 (Wang et al., USENIX
Security 2017, §4). Subset Selection (Ye and Barg 2018; Wang et al., NDSS 2020, §III-C) with
k = round(d/(e^eps + 1)): p* = k e / (k e + d - k), q* = (k e (k-1)/(d-1) + (d-k) k/(d-1)) / (k e + d - k).
OLH with the library's default g = round(e^eps) + 1. PGR with its default q and with the authors'
rule (the next prime >= ceil(e^eps + 1)).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ldpbench import build_plugins
from ldpbench.engine.simulate import simulate
from ldpbench_plugins.datasets.synthetic import apportion
from ldpbench_plugins.oracles.olh import default_range, olh_constants
from ldpbench_plugins.oracles.pgr import PGR, next_prime


def noise(p: float, q: float) -> float:
    return q * (1 - q) / (p - q) ** 2


def subset_selection(d: int, eps: float) -> tuple[float, float]:
    e = math.exp(eps)
    k = max(1, round(d / (e + 1)))
    den = k * e + d - k
    return k * e / den, (k * e * (k - 1) / (d - 1) + (d - k) * k / (d - 1)) / den


def formulas() -> None:
    print("| d | eps | PGR (q, t, K) | PGR | PGR, authors' q | SS | HR | OLH | PGR / SS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for eps in (1, 2, 4):
        e = math.exp(eps)
        for lg in (10, 12, 14, 16):
            d = 2**lg
            pgr = PGR(d=d, epsilon=eps)
            authors = PGR(d=d, epsilon=eps, q=next_prime(math.ceil(e + 1)))
            ours, ss = noise(pgr.p_star, pgr.q_star), noise(*subset_selection(d, eps))
            print(
                f"| 2^{lg} | {eps} | ({pgr.space.q}, {pgr.space.t}, {pgr.space.size:,}) | {ours:.4f} "
                f"| {noise(authors.p_star, authors.q_star):.4f} (q={authors.space.q}) | {ss:.4f} "
                f"| {noise(e / (e + 1), 0.5):.4f} | {noise(*olh_constants(eps, default_range(eps))):.4f} "
                f"| {ours / ss:.4f} |"
            )


def measured(d: int = 1024, n: int = 100_000, eps: float = 2.0, repeats: int = 100) -> None:
    plugins = build_plugins()
    counts = apportion(np.arange(1, d + 1, dtype=float) ** -1.5, n)
    f = counts / n
    rng = np.random.default_rng(2024)
    print(f"\nfull-domain MSE, d = {d}, n = {n:,}, eps = {eps}, Zipf(1.5), {repeats} repeats")
    for name, path in [
        ("pgr", "aggregate"),
        ("pgr", "per-user"),
        ("hr", "aggregate"),
        ("olh", "aggregate"),
        ("oue", "aggregate"),
    ]:
        oracle = plugins.create("oracle", name, d=d, epsilon=eps)
        mse = np.array([np.mean((simulate(oracle, counts, rng, path).frequencies - f) ** 2) for _ in range(repeats)])
        want = float(np.mean(oracle.variance(n, f)))
        print(
            f"{name:4s} {path:9s} {mse.mean():.4e} ± {mse.std(ddof=1) / math.sqrt(repeats):.1e}  "
            f"(formula {want:.4e}, ratio {mse.mean() / want:.3f})"
        )


if __name__ == "__main__":
    formulas()
    if "--formulas" not in sys.argv[1:]:
        measured()
