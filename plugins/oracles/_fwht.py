"""The fast Walsh-Hadamard transform in Sylvester (natural) order (private; [ASZ19] aggregation).

``fwht(x)[r] = sum_y (-1)^popcount(r & y) x[y]``, i.e. multiplication by the unnormalized
Sylvester matrix ``H_K`` (symmetric, ``H_K @ H_K = K I``), in ``O(K log K)`` with in-place
butterflies. Integer input stays integer, so Hadamard Response's support counts are exact.
"""

from __future__ import annotations

import numpy as np


def fwht(x: np.ndarray) -> np.ndarray:
    """Transform along the last axis (length a power of two); returns a new array.

    Integer arrays are transformed in int64 (exact), anything else in float64.
    """
    x = np.asarray(x)
    dtype = np.int64 if np.issubdtype(x.dtype, np.integer) or x.dtype == bool else np.float64
    out = np.array(x, dtype=dtype, copy=True, order="C")
    size = out.shape[-1] if out.ndim else 0
    if size < 1 or size & (size - 1):
        raise ValueError(f"fwht needs a power-of-two length, got {size}")
    lead = out.shape[:-1]
    h = 1
    while h < size:
        # Pairs (i, i + h) with bit log2(h) of i clear: axis -2 of this view is that bit.
        view = out.reshape(*lead, size // (2 * h), 2, h)
        low = view[..., 0, :].copy()
        view[..., 0, :] += view[..., 1, :]
        np.subtract(low, view[..., 1, :], out=view[..., 1, :])
        h *= 2
    return out


def sylvester(size: int) -> np.ndarray:
    """The explicit ``size x size`` Sylvester-Hadamard matrix (tests and tiny domains only)."""
    idx = np.arange(size)
    parity = np.bitwise_count(idx[:, None] & idx[None, :]) & 1
    return (1 - 2 * parity.astype(np.int64)).astype(np.int64)
