"""The slides' table of EM vs corrected estimates ([MHS18] talk, People-flow, three cases) beside em-murakami.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/murakami2018_slides_check.py

Prints, for each of the slides' three cases, how the published correction transforms the EM
estimate (median ratio corrected / EM over entries above 1e-2; median corrected value of entries
below 1e-4), and the same for em-murakami on three fresh N = 1070 runs of the Zipf stand-in
(seed 11): does our output transform an EM estimate the same way?
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import build_plugins
from ldpbench.engine.groups import simulate_groups
from ldpbench.types import Population

# the slides' table: EM -> Proposal for the 15 shown cells of cases (1)-(3)
em = np.array(
    [
        [
            1.89e-06,
            3.04e-02,
            1.49e-02,
            2.40e-06,
            1.64e-02,
            4.20e-02,
            6.47e-02,
            1.49e-02,
            1.63e-02,
            4.52e-02,
            4.04e-07,
            9.01e-06,
            1.64e-02,
            1.89e-06,
            1.89e-06,
        ],
        [
            1.29e-02,
            3.07e-06,
            6.46e-07,
            9.73e-07,
            2.90e-02,
            5.17e-02,
            4.08e-02,
            2.62e-02,
            3.36e-06,
            2.40e-02,
            1.50e-02,
            3.90e-02,
            2.81e-02,
            1.65e-02,
            3.24e-02,
        ],
        [
            1.66e-02,
            1.84e-02,
            3.21e-07,
            1.17e-02,
            1.46e-05,
            2.04e-02,
            4.12e-02,
            2.93e-02,
            8.91e-05,
            5.21e-06,
            3.12e-02,
            5.25e-02,
            3.68e-07,
            1.40e-02,
            3.68e-07,
        ],
    ]
)
pr = np.array(
    [
        [
            1.16e-03,
            2.16e-02,
            1.07e-02,
            1.16e-03,
            1.17e-02,
            2.96e-02,
            4.55e-02,
            1.07e-02,
            1.17e-02,
            3.19e-02,
            2.37e-03,
            7.56e-04,
            1.18e-02,
            1.16e-03,
            1.16e-03,
        ],
        [
            9.36e-03,
            1.19e-03,
            2.41e-03,
            1.19e-03,
            2.07e-02,
            3.67e-02,
            2.90e-02,
            1.87e-02,
            7.78e-04,
            1.72e-02,
            1.08e-02,
            2.77e-02,
            2.00e-02,
            1.19e-02,
            2.31e-02,
        ],
        [
            1.22e-02,
            1.35e-02,
            0.00e00,
            8.64e-03,
            6.11e-04,
            1.49e-02,
            2.98e-02,
            2.12e-02,
            4.50e-04,
            8.19e-04,
            2.26e-02,
            3.78e-02,
            2.50e-03,
            1.03e-02,
            2.50e-03,
        ],
    ]
)


def main() -> None:
    plugins = build_plugins()
    for c in range(3):
        big, small = em[c] > 1e-2, em[c] < 1e-4
        print(
            f"slides case ({c + 1}): large entries x{np.median(pr[c][big] / em[c][big]):.3f} (median ratio), "
            f"entries < 1e-4 lifted to median {np.median(pr[c][small]):.2e}"
        )
    K = 281
    w = np.arange(1, K + 1, dtype=float) ** -1.0
    exact = 303_916 * w / w.sum()
    counts = np.floor(exact).astype(np.int64)
    counts[np.argsort(counts - exact)[: 303_916 - counts.sum()]] += 1
    pop = Population(counts)
    mix = list(zip([0.1, 2.0, math.log(K), math.inf], [500, 500, 50, 20]))
    make = lambda eps: plugins.create("oracle", "grr", {}, d=K, epsilon=eps)  # noqa: E731
    rng = np.random.default_rng(11)
    em_plugin = plugins.create("postprocessor", "em", {})
    murakami = plugins.create("postprocessor", "em-murakami", {})
    for i in range(3):
        est = simulate_groups(make, pop, mix, rng)
        a = em_plugin.apply(est, None).frequencies
        out = murakami.apply(est, np.random.default_rng(i))
        b = out.frequencies
        big, small = a > 1e-2, a < 1e-4
        print(
            f"em-murakami, zipf N=1070 run {i + 1}: alpha {out.info['murakami_alpha']:g}; large entries "
            f"x{np.median(b[big] / a[big]):.3f}, entries < 1e-4 lifted to median {np.median(b[small]):.2e}; "
            f"L1 move {np.abs(b - a).sum():.3g}"
        )


if __name__ == "__main__":
    main()
