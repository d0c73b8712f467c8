"""The fast Walsh-Hadamard transform (plugins/oracles/_fwht.py; docs/algorithms.md §8.1, A5)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles._fwht import fwht, sylvester


@pytest.mark.parametrize("K", [2**j for j in range(1, 11)])
def test_a5_fwht_is_the_sylvester_matrix(K):
    rng = np.random.default_rng(K)
    H = sylvester(K)
    Hf = H.astype(float)  # BLAS; exact for these small integers
    assert np.array_equal(H, H.T) and np.array_equal(Hf @ Hf, K * np.eye(K))
    x = rng.integers(-1000, 1000, K)
    np.testing.assert_allclose(fwht(x), Hf @ x, rtol=0, atol=1e-9)
    assert fwht(x).dtype == np.int64
    np.testing.assert_array_equal(fwht(fwht(x)), K * x)
    xf = rng.normal(size=(3, K))
    np.testing.assert_allclose(fwht(xf), xf @ Hf.T, rtol=0, atol=1e-9)  # batched along the last axis
    np.testing.assert_allclose(fwht(fwht(xf)), K * xf, rtol=1e-12, atol=1e-9)


def test_fwht_entries_are_parities_and_bad_lengths_fail():
    H = sylvester(16)
    r, y = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(H, np.where(np.bitwise_count(r & y) % 2 == 0, 1, -1))
    with pytest.raises(ValueError):
        fwht(np.ones(6))
