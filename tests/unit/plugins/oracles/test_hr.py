"""HR (plugins/oracles/hr.py; docs/algorithms.md §8.1): the Hadamard size and sets, hand-made reports, the large channel."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles.hr import HR, hadamard_size


def test_a2_hadamard_size():
    assert [hadamard_size(d) for d in (30, 31, 32, 1, 3, 41270)] == [32, 32, 64, 2, 4, 65536]
    assert HR(d=32, epsilon=1.0).size == 64 and HR(d=32, epsilon=1.0).bits == 6


def test_a6_hr_support_counts_of_hand_made_reports():
    hr = HR(d=3, epsilon=1.0)  # K = 4; C_0 = {0, 2} (row 1), C_1 = {0, 1} (row 2), C_2 = {0, 3} (row 3)
    reports = np.array([0, 1, 2, 3, 3])
    np.testing.assert_array_equal(hr.support_counts(reports), [2, 2, 3])
    np.testing.assert_array_equal(hr.report_histogram(reports), [1, 1, 1, 2])


def test_a4_hadamard_sets():
    for d in (3, 7, 30, 100):
        hr = HR(d=d, epsilon=1.0)
        _, S = hr.output_table()
        K = hr.size
        assert np.all(S.sum(axis=0) == K // 2)
        inter = S.T.astype(int) @ S.astype(int)
        assert np.all(inter[~np.eye(d, dtype=bool)] == K // 4)


def test_hr_large_channel_uses_the_transform():
    hr = HR(d=1000, epsilon=1.0)  # K d = 1024 * 1000 > 2^16: matrix-free
    channel = hr.channel()
    assert channel._matrix is None
    rng = np.random.default_rng(0)
    theta, w = rng.dirichlet(np.ones(1000)), rng.random(1024)
    fwd = channel.forward(theta)
    assert fwd.sum() == pytest.approx(1.0, rel=1e-12) and np.all(fwd > 0)
    # adjoint: <w, A theta> = <A^T w, theta>
    assert np.dot(w, fwd) == pytest.approx(np.dot(channel.backward(w), theta), rel=1e-12)
    # spot check against the table's formula P(y | v) = (1 + delta H[v + 1, y]) / K
    delta = 2 * hr.p_star - 1
    v, y = 17, 300
    e_v = np.zeros(1000)
    e_v[v] = 1
    sign = 1 - 2 * (bin((v + 1) & y).count("1") % 2)
    assert channel.forward(e_v)[y] == pytest.approx((1 + delta * sign) / 1024, rel=1e-12)
