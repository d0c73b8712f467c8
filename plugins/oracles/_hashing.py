"""A seeded hash family D -> [0, g) in NumPy uint64 arithmetic (private; for OLH's per-user path).

``H_s(v) = reduce_g(mix64(s XOR mix64((v + 1) * GAMMA)))`` where ``mix64`` is the splitmix64
finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014:
xor-shift / multiply rounds, a bijection of 64-bit words), ``GAMMA`` the golden-ratio constant and
``reduce_g(h) = ((h >> 32) * g) >> 32`` Lemire's multiply-shift range reduction (cheaper than a
division; needs g < 2^32).

Properties that OLH relies on:

- **Marginal uniformity, exact up to 2^-32 per bucket**: for a uniformly random 64-bit seed ``s`` and any
  fixed ``v``, ``s XOR key(v)`` is uniform and ``mix64`` is a bijection, so the 64-bit hash is
  uniform; the reduction to [0, g) gives each bucket probability within 2^-32 of 1/g.
- **Cross-value independence is not exact** (no practical hash family is fully random); the
  finalizer's avalanche makes the dependence undetectable in practice. This is the documented
  approximation of "real-hash OLH" (docs/algorithms.md §1.3).
"""

from __future__ import annotations

import numpy as np

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)

#: Elements of the (users x values) hash table evaluated at once when counting supports (2 MiB of
#: uint64): large enough that a block holds several users even at Kosarak's d = 41,270, small
#: enough to stay in cache for the mixer's ~10 passes. Measured against 2^14: 2.7x more users/s at
#: d = 41,270 (one user per block before), 1.3x at d = 1,000; 2^20 is slower at both.
BLOCK_ELEMENTS = 1 << 18

#: Largest hash range the reduction supports.
MAX_RANGE = (1 << 32) - 1


def mix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer, applied **in place** to a uint64 array (returned for chaining)."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def value_keys(values: np.ndarray) -> np.ndarray:
    """Per-value 64-bit keys ``mix64((v + 1) * GAMMA)`` (uint64)."""
    z = (np.asarray(values, dtype=np.int64).astype(np.uint64) + np.uint64(1)) * _GAMMA
    return mix64(z)


def random_seeds(m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` uniformly random 64-bit seeds, one hash function per user."""
    return rng.integers(0, np.iinfo(np.uint64).max, size=m, dtype=np.uint64, endpoint=True)


def reduce_range(z: np.ndarray, g: int) -> np.ndarray:
    """``((z >> 32) * g) >> 32`` in place: a uniform 64-bit word to a nearly uniform bucket of [0, g)."""
    z >>= _S32
    z *= np.uint64(g)
    z >>= _S32
    return z


def hash_pairs(seeds: np.ndarray, keys: np.ndarray, g: int) -> np.ndarray:
    """``H_{seeds[i]}`` at the value with key ``keys[i]``, elementwise (int64 in [0, g))."""
    z = np.bitwise_xor(seeds, keys)
    return reduce_range(mix64(z), g).astype(np.int64)


def hash_table(seeds: np.ndarray, keys: np.ndarray, g: int) -> np.ndarray:
    """``H_{seeds[i]}(v_j)`` for every seed and key: shape ``(len(seeds), len(keys))``, int64."""
    z = np.bitwise_xor(seeds[:, None], keys[None, :])
    return reduce_range(mix64(z), g).astype(np.int64)


def matches_per_value(seeds: np.ndarray, reports: np.ndarray, keys: np.ndarray, g: int) -> np.ndarray:
    """``c_j = #{i : H_{seeds[i]}(v_j) == reports[i]}``, in blocks of about :data:`BLOCK_ELEMENTS`.

    O(m k) hash evaluations for m users and k values; memory stays O(BLOCK_ELEMENTS).
    """
    counts = np.zeros(keys.size, dtype=np.int64)
    if keys.size == 0:
        return counts
    step = max(1, BLOCK_ELEMENTS // keys.size)
    y = np.asarray(reports).astype(np.uint64)
    for start in range(0, seeds.size, step):
        z = np.bitwise_xor(seeds[start : start + step, None], keys[None, :])
        reduce_range(mix64(z), g)
        counts += (z == y[start : start + step, None]).sum(axis=0)
    return counts
