"""The projective space ``P^(t-1)(F_q)`` of Projective Geometry Response (private).

[FNNT22] Feldman, Nelson, Nguyen, Talwar, "Private Frequency Estimation via Projective Geometry",
ICML 2022 (arXiv 2203.00194).

Only **prime** ``q``: arithmetic in ``F_q`` is then arithmetic mod ``q``. (Prime powers would need
GF(p^k) multiplication tables; the default ``q`` is a prime anyway.)

Points. A point of ``P^(t-1)`` is a line through the origin of ``F_q^t``; it is named by its
*canonical* vector, the one whose first nonzero coordinate is 1. There are
``K = (q^t - 1)/(q - 1)`` points. Their **rank** orders them by the position ``j`` of the leading 1
(``j = 0`` first), then by the tail ``x_(j+1..t-1)`` read as a base-q number:
``rank(x) = (q^t - q^(t-j))/(q - 1) + tail``. This order has the property the decoder relies on:
appending a digit ``d`` to a canonical vector of rank ``r`` gives rank ``q r + d``.

Hyperplanes. Point ``u`` is on the hyperplane of point ``v`` iff ``<u, v> = 0`` (mod q). Every
hyperplane holds ``c_set = (q^(t-1) - 1)/(q - 1)`` points, two distinct hyperplanes share
``c_int = (q^(t-2) - 1)/(q - 1)`` ([FNNT22], the mechanism), which is what makes PGR's supports equal-sized.

Arrays of "canonical-or-zero" vectors of length m use the index 0 for the zero vector and
``1 + rank`` for a canonical one: ``N_m = 1 + (q^m - 1)/(q - 1)`` indices.
"""

from __future__ import annotations

import numpy as np

#: Elements per gathered block of the decoder (bounds its temporaries to a few tens of MB).
_BLOCK_ELEMENTS = 1 << 22
#: Largest table of residues mod q kept for the samplers (entries).
_RESIDUE_TABLE_MAX = 1 << 20
#: Largest (distinct reports x items) table summed directly instead of by the dynamic program.
_DIRECT_MAX = 1 << 18


def is_prime(n: int) -> bool:
    """Trial division (``n`` is at most a few million here)."""
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def points(q: int, m: int) -> int:
    """``(q^m - 1)/(q - 1)``: the number of points of ``P^(m-1)(F_q)`` (0 for m = 0)."""
    return (q**m - 1) // (q - 1)


def inverses(q: int) -> np.ndarray:
    """``inv[g] = g^(-1) mod q`` for g = 1..q-1 (``inv[0] = 0``, never used as an inverse)."""
    g = np.arange(q, dtype=np.int64)
    inv = np.zeros(q, dtype=np.int64)
    inv[1:] = [pow(int(x), -1, q) for x in g[1:]]
    return inv


class ProjectiveSpace:
    """``P^(t-1)(F_q)`` for a prime ``q`` and ``t >= 2``: ranks, hyperplane sampling, incidence sums."""

    def __init__(self, q: int, t: int):
        self.q, self.t = int(q), int(t)
        self.size = points(self.q, self.t)  #: K, the number of points
        self.on_hyperplane = points(self.q, self.t - 1)  #: c_set
        self.on_two_hyperplanes = points(self.q, self.t - 2)  #: c_int
        self.inv = inverses(self.q)
        #: q^(t-1-i): weight of digit i in a base-q code (digit 0 most significant)
        self._weights = self.q ** np.arange(self.t - 1, -1, -1, dtype=np.int64)
        #: first rank of each leading-1 position j = 0..t-1
        self._block_start = np.array(
            [(self.q**self.t - self.q ** (self.t - j)) // (self.q - 1) for j in range(self.t)], dtype=np.int64
        )
        self._suffix_maps: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        bound = (self.t + 1) * self.q**2
        self._residues = np.arange(bound, dtype=np.int64) % self.q if bound <= _RESIDUE_TABLE_MAX else None

    # -- ranks ---------------------------------------------------------------------------------
    def vectors(self, ranks: np.ndarray) -> np.ndarray:
        """The canonical vectors ``(len(ranks), t)`` of the points with these ranks."""
        r = np.asarray(ranks, dtype=np.int64)
        j = np.searchsorted(self._block_start, r, side="right") - 1
        tail = r - self._block_start[j]
        # The tail has t-1-j digits, so its digits at positions <= j come out 0.
        x = (tail[:, None] // self._weights[None, :]) % self.q
        x[np.arange(r.size), j] = 1
        return x

    def ranks(self, x: np.ndarray) -> np.ndarray:
        """Ranks of the points spanned by the nonzero vectors ``x`` (rows of an ``(m, t)`` array)."""
        x = np.asarray(x, dtype=np.int64)
        rows = np.arange(x.shape[0])
        j = np.argmax(x != 0, axis=1)
        scaled = self._mod(x * self.inv[x[rows, j]][:, None])  # leading digit becomes 1
        code = scaled @ self._weights
        return self._block_start[j] + code - self._weights[j]

    # -- sampling ---------------------------------------------------------------------------------
    def sample(
        self, ranks: np.ndarray, inside: np.ndarray, rng: np.random.Generator, table: np.ndarray | None = None
    ) -> np.ndarray:
        """For each point ``v`` (by rank): a point uniform on v's hyperplane where ``inside``, else
        uniform off it. O(t) per user, vectorized. ``table``: the vectors of ranks ``0..r`` when the
        caller holds them (``table[ranks]`` then replaces computing them).

        Uniform on ``{x in F_q^t : <x, v> = c}`` is: free coordinates uniform, and the coordinate of
        v's leading 1 solved for ``<x, v> = c``. With ``c = 0`` this is uniform on the hyperplane's
        ``q^(t-1)`` vectors; the zero vector is redrawn, and every point on the hyperplane has
        exactly ``q - 1`` nonzero vectors, so the point is uniform among the ``c_set``. With
        ``c = 1`` it is uniform on ``{x : <x, v> = 1}``, which holds exactly one vector of each of
        the ``q^(t-1) = K - c_set`` points off the hyperplane (scaling x scales ``<x, v>``).
        """
        v = self.vectors(ranks) if table is None else table[ranks]
        m = v.shape[0]
        lead = np.argmax(v != 0, axis=1)
        target = (~np.asarray(inside, dtype=bool)).astype(np.int64)
        x = rng.integers(0, self.q, size=(m, self.t), dtype=np.int64)
        self._solve(x, v, lead, target)
        zero = np.flatnonzero(~x.any(axis=1))
        while zero.size:  # only inside rows can be zero: P = q^-(t-1) each time
            redraw = rng.integers(0, self.q, size=(zero.size, self.t), dtype=np.int64)
            self._solve(redraw, v[zero], lead[zero], target[zero])
            x[zero] = redraw
            zero = zero[~redraw.any(axis=1)]
        return self.ranks(x)

    def hyperplane_points(self, ranks: np.ndarray) -> np.ndarray:
        """``(len(ranks), c_set)``: the ranks of all points on each given point's hyperplane.

        For v with leading 1 at j, ``w -> x`` with ``x_i = w_i`` (i != j) and
        ``x_j = -sum_(i != j) w_i v_i`` is a linear bijection from ``F_q^(t-1)`` onto the hyperplane,
        so the canonical vectors w of length t-1 give each of its points exactly once.
        """
        v = self.vectors(ranks)
        lead = np.argmax(v != 0, axis=1)
        w = (
            ProjectiveSpace(self.q, self.t - 1).vectors(np.arange(self.on_hyperplane))
            if self.t > 2
            else np.ones((1, 1), dtype=np.int64)
        )
        out = np.empty((v.shape[0], self.on_hyperplane), dtype=np.int64)
        for j in np.unique(lead):  # at most t groups
            rows = np.flatnonzero(lead == j)
            x = np.insert(w, j, 0, axis=1)  # (c_set, t), zero at the solved coordinate
            x = np.broadcast_to(x, (rows.size, *x.shape)).copy()
            x[:, :, j] = (-(x @ v[rows, :, None])[:, :, 0]) % self.q
            out[rows] = self.ranks(x.reshape(-1, self.t)).reshape(rows.size, -1)
        return out

    def _solve(self, x: np.ndarray, v: np.ndarray, lead: np.ndarray, target: np.ndarray) -> None:
        """Set ``x[lead]`` so that ``<x, v> = target`` (v's coordinate at ``lead`` is 1)."""
        rows = np.arange(x.shape[0])
        x[rows, lead] = 0
        # + t q^2 (a multiple of q) keeps the argument of the reduction non-negative
        x[rows, lead] = self._mod(target + self.t * self.q**2 - np.einsum("ij,ij->i", x, v))

    def _mod(self, a: np.ndarray) -> np.ndarray:
        """``a mod q`` for ``0 <= a < (t + 1) q^2``: a table lookup when the table is small (three
        times faster than integer division, the samplers' largest cost), else ``%``."""
        return a % self.q if self._residues is None else self._residues[a]

    # -- incidence sums ---------------------------------------------------------------------------
    def incidence_direct(self, y: np.ndarray, items: int) -> np.ndarray:
        """``T[v] = sum_{u : <u, v> = 0} y[u]`` for v < ``items`` by the definition, O(items K t).
        For tests and tiny spaces only."""
        u = self.vectors(np.arange(self.size))
        v = self.vectors(np.arange(items))
        incident = ((u @ v.T) % self.q) == 0
        return np.asarray(y) @ incident

    def suffix_map(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`_suffix_map` for length ``m``, computed once per space."""
        if m not in self._suffix_maps:
            self._suffix_maps[m] = _suffix_map(self, m)
        return self._suffix_maps[m]

    def incidence(self, y: np.ndarray, items: int) -> np.ndarray:
        """``T[v] = sum_{u : <u, v> = 0} y[u]`` for the first ``items`` points, in O(K q t) time by
        the dynamic program of [FNNT22]'s reconstruction (see :func:`incidence_sums`). Exact for integer ``y``.

        Few distinct reports (a small chunk, a tiny population) are summed directly instead: the
        same numbers, at a cost of (distinct reports x items) rather than K q t.
        """
        y = np.asarray(y)
        used = np.flatnonzero(y)
        if used.size * items <= min(_DIRECT_MAX, self.size * self.q):
            incident = (self.vectors(used) @ self.vectors(np.arange(items)).T) % self.q == 0
            return y[used] @ incident.astype(y.dtype)
        return incidence_sums(self, y, items)


def _normalize(q: int, inv: np.ndarray, codes: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """For vectors ``w`` of ``F_q^m`` given by base-q codes: the canonical-or-zero index of the point
    they span (0 for w = 0) and the scale ``g`` with ``w = g * canonical`` (1 for w = 0)."""
    codes = np.asarray(codes, dtype=np.int64)
    if m == 0:
        return np.zeros(codes.size, dtype=np.int64), np.ones(codes.size, dtype=np.int64)
    weights = q ** np.arange(m - 1, -1, -1, dtype=np.int64)
    digits = (codes[:, None] // weights[None, :]) % q
    nonzero = digits != 0
    j = np.argmax(nonzero, axis=1)
    rows = np.arange(codes.size)
    g = np.where(nonzero.any(axis=1), digits[rows, j], 1)
    scaled_code = ((digits * inv[g][:, None]) % q) @ weights
    starts = np.array([(q**m - q ** (m - i)) // (q - 1) for i in range(m)], dtype=np.int64)
    index = 1 + starts[j] + scaled_code - weights[j]
    return np.where(codes == 0, 0, index), g


def _suffix_map(space: ProjectiveSpace, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every canonical-or-zero vector ``b = (b0, b')`` of length ``m >= 1`` (by index):
    ``b0``, the canonical-or-zero index of ``b'`` (length m-1) and ``g^(-1)`` with ``b' = g * canon``.

    With the rank order: ranks below ``q^(m-1)`` are ``(1, w)`` with ``w`` of code ``rank``; the
    others are ``(0, b')`` with ``b'`` canonical of rank ``rank - q^(m-1)``.
    """
    q = space.q
    count = points(q, m)
    rank = np.arange(count, dtype=np.int64)
    lead_one = rank < q ** (m - 1)
    b0 = np.concatenate([[0], lead_one.astype(np.int64)])
    sub, g = _normalize(q, space.inv, rank[lead_one], m - 1)
    rest = np.empty(count, dtype=np.int64)
    scale = np.ones(count, dtype=np.int64)
    rest[lead_one], scale[lead_one] = sub, g
    rest[~lead_one] = 1 + rank[~lead_one] - q ** (m - 1)
    return b0, np.concatenate([[0], rest]), np.concatenate([[1], space.inv[scale]])


def incidence_sums(space: ProjectiveSpace, y: np.ndarray, items: int) -> np.ndarray:
    """``T[v] = sum_{u : <u, v> = 0} y[u]`` for points ``v < items``: the decoder of [FNNT22]'s reconstruction.

    A dynamic program over a split of the coordinates. At level ``l`` (0..t), for ``a`` a prefix of
    length l of a canonical point (itself zero or canonical), ``b`` a vector of length t-l (zero or
    canonical: ``F(a, g b, z) = F(a, b, z/g)``) and ``z`` in F_q::

        F_l(a, b, z) = sum of y[u] over points u = (a, s) with <s, b> = z.

    ``F_t(a, (), z) = y[a] [z = 0]``; ``F_l(a, (b0, b'), z) = sum_d F_(l+1)((a, d), b', z - d b0)``,
    where ``d`` ranges over F_q (over {0, 1} when a = 0: u's leading digit is 1); and
    ``T[v] = F_0((), v, 0)``. A level holds about ``K q / (q - 1)`` states, each a sum of q
    terms: O(K q t) time and O(K) memory, against O(K d) for the sums taken directly.

    With the rank order, ``(a, d)`` for canonical ``a`` of index ``1 + r`` has index
    ``1 + q r + d``: the states of level l+1 reshape to ``[a, d, ...]`` without a gather.
    """
    q, t = space.q, space.t
    y = np.asarray(y)
    if y.shape != (space.size,):
        raise ValueError(f"incidence sums need {space.size} report counts, got shape {y.shape}")
    # Level t-1 in closed form (F_t would hold K q states, all but K of them zero): b is zero or (1),
    # F(a, 0, z) = [z = 0] sum_d y[(a, d)] and F(a, (1), z) = y[(a, z)]. Point (a, d) has rank
    # q r + d for canonical a of rank r; (0, ..., 0, 1), the last point, extends a = 0.
    state = np.zeros((1 + points(q, t - 1), 2, q), dtype=y.dtype)
    extended = y[:-1].reshape(-1, q)
    state[1:, 1, :] = extended
    state[1:, 0, 0] = extended.sum(axis=1)
    state[0, 0, 0] = state[0, 1, 1] = y[-1]
    for level in range(t - 2, -1, -1):
        b0, rest, ginv = space.suffix_map(t - level)
        # the last level needs z = 0 only, and only for the first `items` points
        z = np.zeros(1, dtype=np.int64) if level == 0 else np.arange(q, dtype=np.int64)
        if level == 0:
            b0, rest, ginv = b0[: items + 1], rest[: items + 1], ginv[: items + 1]
        canonical = state[1:-1].reshape(points(q, level), q, state.shape[1], q)  # [a, d, b', w]
        zero_prefix = state[[0, -1]][None]  # a = 0 extended by d = 0 and d = 1
        new = np.empty((1 + points(q, level), b0.size, z.size), dtype=y.dtype)
        new[:1] = _gather_sum(zero_prefix, b0, rest, ginv, z, q)
        if canonical.shape[0]:
            new[1:] = _gather_sum(canonical, b0, rest, ginv, z, q)
        state = new
    return state[0, 1 : items + 1, 0].copy()


def _gather_sum(
    block: np.ndarray, b0: np.ndarray, rest: np.ndarray, ginv: np.ndarray, z: np.ndarray, q: int
) -> np.ndarray:
    """``out[a, b, z] = sum_d block[a, d, rest[b], (z - d b0[b]) ginv[b]]``, in slices of b that
    bound the gathered temporaries to about :data:`_BLOCK_ELEMENTS` elements."""
    n_a, n_d = block.shape[:2]
    n_b = b0.size
    out = np.empty((n_a, n_b, z.size), dtype=block.dtype)
    step = max(1, _BLOCK_ELEMENTS // max(1, n_a * n_d * z.size))
    digit = np.arange(n_d, dtype=np.int64)[None, :, None]
    for start in range(0, n_b, step):
        stop = min(n_b, start + step)
        shift = (z[None, None, :] - digit * b0[start:stop, None, None]) % q
        zz = (shift * ginv[start:stop, None, None]) % q  # (b, d, z)
        picked = block[:, digit, rest[start:stop, None, None], zz]  # (a, b, d, z)
        out[:, start:stop] = picked.sum(axis=2)
    return out
