"""Samplers of Hadamard Response's reports (private; [ASZ19], high-privacy form, docs/algorithms.md §1.2).

Notation: ``K = 2^k``; value ``v`` uses Hadamard row ``r = v + 1``;
``C_v = {y in [0, K) : popcount(r & y) even}`` (the +1 entries of row r), ``|C_v| = K/2``. A user
holding v reports y uniform on ``C_v`` w.p. ``p_in = e^eps/(e^eps+1)``, else uniform on the
complement.

Two exact samplers of the report histogram:

- :func:`per_user_reports`: the parity-flip sampler, O(1) per user (draw u uniform on [0, K); u and
  ``u XOR b`` (b = lowest set bit of r) have opposite parity w.r.t. r; output the one on the wanted
  side). O(n).
- :func:`exact_histograms`: a bit-by-bit splitting of **counts**, O((d + K) log K), independent of
  n (the Kosarak sweep: d = 41,270, K = 65,536, n = 8M in a few tens of ms). Why it is exact:

  1. ``A_v ~ Binomial(n_v, p_in)`` users of item v land uniformly on ``{y : r.y = 0}``, the other
     ``n_v - A_v`` on ``{y : r.y = 1}`` (dot products over GF(2)).
  2. Decide the bits of y from the lowest up. Invariant: after t bits, a user whose low bits are
     ``p`` is uniform on ``{z : a.z = c}`` over the remaining high bits z, with ``a = r >> t`` and
     a parity ``c``. Call ``(p, a, c)`` its *state*; users in the same state are exchangeable.
  3. Next bit ``z_0``: if ``a >> 1 != 0`` it is a fair coin (for either value of z_0 the rest of
     the constraint has the same number of solutions), and the new state is
     ``(p + z_0 2^t, a >> 1, c XOR (a_0 AND z_0))``; if ``a == 1`` the bit is forced, ``z_0 = c``,
     and the rest is free (``a = 0``); if ``a == 0`` the bit is a fair coin and stays free. So the
     N users of a state split as ``Binomial(N, 1/2)`` (or deterministically), independently of
     every other state, and states that map to the same new state merge: their future laws are
     identical. (Items 2j and 2j+1 share ``a >> 1``: the number of live states stays about
     ``2 (d + 2^t)`` at every level.)
  4. After k bits every user is free and ``p`` is her report: the histogram is the count of state
     ``(y, 0, 0)``.

  ``Binomial(N, 1/2)`` itself is drawn exactly as the popcount of N random bits (faster than a
  general binomial sampler and exact for any N).
"""

from __future__ import annotations

import numpy as np

_ALL = np.iinfo(np.uint64).max
#: MASKS[b] has the low b bits set, b = 0..64.
_MASKS = np.array([0] + [(1 << b) - 1 for b in range(1, 65)], dtype=np.uint64)
#: Binomial(n, 1/2) from random bits up to this n; a general binomial sampler above (timed: one
#: BTPE draw costs about as much as ten words of bits).
_BITS_UP_TO = 640


def hr_output(r: np.ndarray, u: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """The parity-flip sampler as a function of its random inputs.

    ``u`` uniform on [0, K); the output is whichever of ``u`` and ``u XOR b`` lies in ``C_v``
    (``inside`` true) or in its complement (``inside`` false), where ``b`` is r's lowest set bit.
    """
    b = r & -r
    odd = (np.bitwise_count(r & u) & 1).astype(bool)  # u outside C_v
    return u ^ np.where(odd == inside, b, 0)


def per_user_reports(values: np.ndarray, k: int, p_in: float, rng: np.random.Generator) -> np.ndarray:
    """Reports of users holding ``values`` (int64 in [0, 2^k)), O(1) each."""
    u = rng.integers(0, 1 << k, size=values.size, dtype=np.int64)
    inside = rng.random(values.size) < p_in
    return hr_output(values + 1, u, inside)


def binomial_half(n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact ``Binomial(n, 1/2)`` for every entry of the flat int array ``n``.

    Small entries (the vast majority) are popcounts of n fair random bits: one 64-bit word covers
    n <= 64, a few more words cover n <= :data:`_BITS_UP_TO`; above that a general binomial draw is
    cheaper than n/64 words.
    """
    raw = rng.integers(0, _ALL, size=n.size, dtype=np.uint64, endpoint=True)
    raw &= _MASKS[np.minimum(n, 64)]
    out = np.bitwise_count(raw).astype(n.dtype)
    mid = np.flatnonzero(n > 64)
    if mid.size:
        sizes = n[mid].astype(np.int64)
        huge = sizes > _BITS_UP_TO
        if huge.any():
            out[mid[huge]] = rng.binomial(sizes[huge], 0.5)
            mid, sizes = mid[~huge], sizes[~huge]
        extra = sizes - 64
        words = (extra + 63) >> 6
        bounds = np.zeros(mid.size + 1, dtype=np.int64)
        np.cumsum(words, out=bounds[1:])
        more = rng.integers(0, _ALL, size=int(bounds[-1]), dtype=np.uint64, endpoint=True)
        more[bounds[1:] - 1] &= _MASKS[extra - 64 * (words - 1)]
        cumulative = np.zeros(more.size + 1, dtype=np.int64)
        np.cumsum(np.bitwise_count(more), out=cumulative[1:])
        out[mid] += (cumulative[bounds[1:]] - cumulative[bounds[:-1]]).astype(n.dtype)
    return out


def exact_histograms(counts: np.ndarray, k: int, p_in: float, rng: np.random.Generator) -> np.ndarray:
    """Report histograms (length 2^k) of independent populations, by the splitting of the module doc.

    :param counts: ``(d,)`` or ``(B, d)`` true counts (B independent populations, vectorized).
    :returns: int64 histograms of shape ``(2^k,)`` or ``(B, 2^k)``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    single = counts.ndim == 1
    counts = np.atleast_2d(counts)
    batch, d = counts.shape
    if d + 1 > 1 << k:
        raise ValueError(f"rows 1..{d} do not fit in 2^{k} outputs")
    dtype = np.int32 if int(counts.sum(axis=1).max(initial=0)) < 2**31 else np.int64
    inside = rng.binomial(counts, p_in)
    width = d + 1 + (d + 1) % 2  # a = r >> t takes values 0..d; even width for the pair merge
    # state counts: (population, parity c, a, low bits p); a is in natural order, p fastest.
    state = np.zeros((batch, 2, width, 1), dtype=dtype)
    state[:, 0, 1 : d + 1, 0] = inside
    state[:, 1, 1 : d + 1, 0] = counts - inside
    for _ in range(k):
        _, _, width, low = state.shape
        half = width // 2
        ones = binomial_half(state.reshape(-1), rng).reshape(batch, 2, half, 2, low)
        split = state.reshape(batch, 2, half, 2, low)  # [..., j, a_0, p] with a = 2 j + a_0
        # a == 1 (j = 0, a_0 = 1): the bit is forced to c.
        ones[:, 0, 0, 1] = 0
        ones[:, 1, 0, 1] = split[:, 1, 0, 1]
        np.subtract(split, ones, out=split)  # split now holds the users whose bit is 0
        new_width = max(2, half + half % 2)  # even, so that the next level can pair a = 2j, 2j + 1
        new = np.zeros((batch, 2, new_width, 2 * low), dtype=dtype)
        # bit 0: parity unchanged; bit 1: parity flips when a_0 = 1. New p = p + bit * 2^t.
        np.add(split[:, :, :, 0], split[:, :, :, 1], out=new[:, :, :half, :low])
        np.add(ones[:, 0, :, 0], ones[:, 1, :, 1], out=new[:, 0, :half, low:])
        np.add(ones[:, 1, :, 0], ones[:, 0, :, 1], out=new[:, 1, :half, low:])
        state = new
    hist = state[:, 0, 0, :].astype(np.int64)
    return hist[0] if single else hist


def use_per_user(n: int, d: int, k: int) -> bool:
    """Whether the O(n) sampler is cheaper than the O((d + K) k) splitting (both are exact)."""
    # Each level of the splitting costs ~15 NumPy calls (~2500 users of per-user sampling) plus
    # about (d + K)/2 users' worth of work per level.
    return n < k * (2500 + ((d + (1 << k)) >> 1))
