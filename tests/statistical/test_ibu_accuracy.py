"""ibu by repeated simulation (fixed seeds): it beats the unbiased estimate where that is far off
the simplex, and it is consistent -- with many users its estimate centres on the truth.

Both would fail with a wrong likelihood: a wrong q* shifts every item by about
``(q*_wrong - q*) / (p* - q*)``, dozens of standard errors at these sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.engine.simulate import simulate

PLUGINS = builtin_plugins()
#: The four first oracles, and the others that declare ``bernoulli_support`` (or a channel).
ORACLES = ("grr", "oue", "olh", "hr", "ss", "sue", "blh", "the", "pgr", "cms", "hcms")


def _zipf_counts(d, n, s):
    w = 1.0 / np.arange(1, d + 1) ** s
    return np.round(n * w / w.sum()).astype(np.int64)


def _runs(oracle, counts, epsilon, repeats, seed):
    o = PLUGINS.create("oracle", oracle, {}, d=counts.size, epsilon=epsilon)
    ibu = PLUGINS.create("postprocessor", "ibu", {})
    rng = np.random.default_rng(seed)
    base, processed = [], []
    for _ in range(repeats):
        est = simulate(o, counts, rng)
        base.append(est.frequencies)
        processed.append(ibu.apply(est, rng).frequencies)
    return np.array(base), np.array(processed)


@pytest.mark.parametrize("oracle", ORACLES)
def test_ibu_mse_is_far_below_the_unbiased_estimate_at_small_epsilon(oracle):
    # d = 64, n = 20,000, eps = 0.5, Zipf 1.5: most items are rare, the unbiased estimate's noise
    # (sd ~ 0.01-0.05 per item) is far larger than their frequencies; IBU stays on the simplex.
    counts = _zipf_counts(64, 20_000, 1.5)
    f = counts / counts.sum()
    base, ibu = _runs(oracle, counts, 0.5, repeats=12, seed=1)
    mse_base = np.mean((base - f) ** 2, axis=1)
    mse_ibu = np.mean((ibu - f) ** 2, axis=1)
    # in every repeat, and by a factor on average (measured: 3.7x to 6.5x on average, at least 2.3x in every repeat)
    assert np.all(mse_ibu < mse_base), (mse_ibu, mse_base)
    assert mse_ibu.mean() < 0.5 * mse_base.mean(), (mse_ibu.mean(), mse_base.mean())


@pytest.mark.parametrize("oracle", ORACLES)
def test_ibu_is_consistent(oracle):
    # n = 2,000,000 users on 12 items (smallest frequency ~ 0.028): the MLE is interior, its bias
    # O(1/n); each item's mean over 16 repeats must sit within 5 standard errors of the truth.
    counts = _zipf_counts(12, 2_000_000, 1.0)
    f = counts / counts.sum()
    _, ibu = _runs(oracle, counts, 1.0, repeats=16, seed=2)
    se = ibu.std(axis=0, ddof=1) / np.sqrt(ibu.shape[0])
    z = (ibu.mean(axis=0) - f) / se
    assert np.all(np.abs(z) < 5), z
