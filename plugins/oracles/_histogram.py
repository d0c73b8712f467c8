"""Histogram encoding: a one-hot vector plus Laplace noise on every coordinate (private; SHE and THE).

[W17] Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017, §4.2: a user holding v sends ``y = e_v + Lap(2/eps)^d``. Two one-hot
vectors differ in two coordinates (L1 sensitivity 2), so Laplace noise of scale ``2/eps`` on each
coordinate gives eps-LDP (the Laplace mechanism).
"""

from __future__ import annotations

import math

import numpy as np

#: Float64 coordinates per chunk of the per-user path (32 MiB of reports).
COORDINATES_PER_CHUNK = 1 << 22


def laplace_scale(epsilon: float) -> float:
    """``b = 2 / eps`` ([W17] §4.2); 0 for ``eps = inf`` (no noise)."""
    return 0.0 if math.isinf(epsilon) else 2.0 / epsilon


def chunk_users(d: int) -> int:
    """Users per chunk so that a chunk of reports holds about :data:`COORDINATES_PER_CHUNK` floats."""
    return max(1, COORDINATES_PER_CHUNK // max(1, d))


def laplace_noise(shape: tuple[int, int], scale: float, rng: np.random.Generator) -> np.ndarray:
    """i.i.d. Laplace(0, scale) draws as ``scale * E * S``, E ~ Exponential(1) and S a fair sign:
    the same law as ``rng.laplace`` (the Laplace law is the symmetrized exponential), about twice
    as fast (the exponential is a ziggurat draw, the signs are eight to a random byte)."""
    size = int(np.prod(shape))
    noise = rng.standard_exponential(size)
    noise *= scale
    signs = np.unpackbits(rng.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8), count=size)
    np.negative(noise, out=noise, where=signs.view(bool))
    return noise.reshape(shape)


def noisy_one_hot(values: np.ndarray, d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """``(m, d)`` float64 reports: ``e_{values[u]} + Laplace(0, scale)`` on every coordinate."""
    m = values.size
    reports = laplace_noise((m, d), scale, rng) if scale > 0 else np.zeros((m, d))
    reports[np.arange(m), values] += 1.0
    return reports


def laplace_tail(x: float, scale: float) -> float:
    """``P(L > x)`` for ``L ~ Laplace(0, scale)``: ``1 - F(x)`` ([W17] §4.2 writes F for the CDF)."""
    if scale == 0:
        return 1.0 if x < 0 else 0.0
    if x >= 0:
        return 0.5 * math.exp(-x / scale)
    return 1.0 - 0.5 * math.exp(x / scale)
