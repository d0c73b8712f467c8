"""OUE (plugins/oracles/oue.py): sparse reports, and the chunk size that bounds memory."""

from __future__ import annotations

import numpy as np

from ldpbench_plugins.oracles.oue import OUE


def test_oue_sparse_reports():
    rng = np.random.default_rng(2)
    oue = OUE(d=50, epsilon=1.0)
    values = rng.integers(0, 50, 3000)
    reports = oue.perturb(values, rng)
    assert reports.n_users == 3000
    keys = reports.user * 50 + reports.item
    assert np.unique(keys).size == keys.size, "a (user, item) pair appears twice"
    bits = reports.dense(50)
    np.testing.assert_array_equal(bits.sum(axis=0), oue.support_counts(reports))
    own = bits[np.arange(3000), values]
    assert abs(own.mean() - 0.5) < 5.5 * np.sqrt(0.25 / 3000)
    others = (bits.sum() - own.sum()) / (3000 * 49)
    assert abs(others - oue.q_star) < 5.5 * np.sqrt(oue.q_star * (1 - oue.q_star) / (3000 * 49))


def test_oue_chunk_size_bounds_memory():
    assert OUE(d=10, epsilon=1.0).chunk_users == 1 << 20
    big = OUE(d=41_270, epsilon=1.0)
    assert big.chunk_users * (0.5 + 41_269 * big.q_star) <= 1.01 * (1 << 22)
    assert OUE(d=10**7, epsilon=0.01).chunk_users >= 1
