"""The histogram oracles' noise (plugins/oracles/_histogram.py): the Laplace sampler has the Laplace law."""

from __future__ import annotations

import math

import numpy as np


def test_laplace_noise_has_the_laplace_law():
    """The symmetrized-exponential sampler against scipy's Laplace CDF (KS, 200,000 draws), and
    both halves: exactly symmetric signs, exponential magnitudes."""
    from scipy import stats as st

    from ldpbench_plugins.oracles._histogram import laplace_noise

    x = laplace_noise((400, 500), 2.0, np.random.default_rng(9)).ravel()
    assert st.kstest(x, "laplace", args=(0, 2.0)).pvalue >= 1e-6
    assert abs((x > 0).mean() - 0.5) <= 5.5 * 0.5 / math.sqrt(x.size)
    assert st.kstest(np.abs(x), "expon", args=(0, 2.0)).pvalue >= 1e-6
