"""Projective Geometry Response (PGR), private-coin version.

[FNNT22] Feldman, Nelson, Nguyen, Talwar, "Private Frequency Estimation via Projective Geometry",
ICML 2022 (arXiv 2203.00194): the ProjectiveGeometryResponse mechanism and the server's
dynamic-programming reconstruction, cited below as [FNNT22, mechanism] and [FNNT22, DP].

Items are points of the projective space ``P^(t-1)(F_q)``: item v is the point of rank v (see
:mod:`._projective`), with ``t >= 2`` the smallest dimension whose ``K = (q^t - 1)/(q - 1)``
points cover the d items. A report is a point u as well, read as the hyperplane ``{w : <u, w> = 0}``;
it supports the items on that hyperplane. A user holding v reports u with probability
proportional to ``e^eps`` if ``<u, v> = 0`` and to 1 otherwise ([FNNT22, mechanism])::

    P(u | v) = e^eps / Z  on v's hyperplane (c_set = (q^(t-1) - 1)/(q - 1) points),
               1 / Z      off it,           Z = (e^eps - 1) c_set + K.

Two distinct hyperplanes meet in ``c_int = (q^(t-2) - 1)/(q - 1)`` points, so the pure-protocol
constants ([W17]: Wang et al., USENIX Security 2017, §4) are exact::

    p* = e^eps c_set / Z,        q* = ((e^eps - 1) c_int + c_set) / Z.

``q`` is a prime (only primes: F_q is then arithmetic mod q, no GF(p^k) tables). The default is
the prime next to ``e^eps + 1`` (from below or above) with the smaller variance (the variance is
smallest near q = e^eps + 1, [FNNT22, mechanism]); the authors' code always takes the next prime above.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Channel, Oracle, OracleTags

from ._common import aggregate_param, as_counts, as_items, check_domain, check_epsilon, exp_neg, independent_binomials
from ._projective import ProjectiveSpace, is_prime, points

#: Largest projective space (points = report values) we build: its histogram and the decoder's
#: states are O(K) integers.
MAX_POINTS = 1 << 24
#: Largest K q t accepted: the decoder's work per estimate (a large eps with a large d: the default
#: q near e^eps + 1 then makes decoding take minutes; [FNNT22]'s cost is O(K e^eps log K) too).
MAX_DECODE_WORK = 1 << 33
#: Largest q accepted, the largest prime below 2^16: beyond it even t = 2 (K = q + 1) exceeds
#: MAX_DECODE_WORK, 2 q^2 operations per estimate.
MAX_Q = 65_521
#: Elements of the (users, t) int64 temporaries of one sampling chunk (32 MB each): a chunk holds
#: this // t users, on both paths.
_CHUNK_ELEMENTS = 1 << 22
#: Items with at least this many times c_set users on their hyperplane get one multinomial draw.
_MULTINOMIAL_FROM = 1
#: Largest (d x t) table of item vectors kept by an oracle.
_ITEM_TABLE_MAX = 1 << 22
#: ``output_table`` enumerates K x d entries while K is at most this.
_TABLE_MAX_POINTS = 1 << 20


def next_prime(n: int) -> int:
    """The smallest prime >= n."""
    n = max(2, int(n))
    while not is_prime(n):
        n += 1
    return n


def previous_prime(n: int) -> int | None:
    """The largest prime <= n (``None`` below 2)."""
    n = int(n)
    while n >= 2 and not is_prime(n):
        n -= 1
    return n if n >= 2 else None


def default_field(epsilon: float, d: int) -> int:
    """The prime nearest ``e^eps + 1`` from below or above whose PGR has the smaller variance at
    this d ([FNNT22, mechanism]: the variance is smallest near q = e^eps + 1, where it matches Subset
    Selection's). The authors' code always rounds up (the next prime >= ceil(e^eps + 1)); at
    eps = 1 that is q = 5 where q = 3 is 1.4% better, at eps = 2 q = 11 where q = 7 is 1.2% better."""
    if not math.isfinite(epsilon) or math.exp(epsilon) + 1 > MAX_Q:
        raise ParamError(
            f"oracle 'pgr': the default q (a prime near e^eps + 1) is too large for epsilon={epsilon}; "
            f"give a prime q explicitly (2 <= q <= {MAX_Q})",
            "q",
        )
    target = math.exp(epsilon) + 1
    candidates = {next_prime(math.ceil(target))} | ({previous_prime(math.floor(target))} - {None})

    def noise(q: int) -> float:
        _, p_star, q_star = pgr_constants(epsilon, q, dimension(d, q))
        return q_star * (1 - q_star) / (p_star - q_star) ** 2

    return min(sorted(candidates), key=noise)


def dimension(d: int, q: int) -> int:
    """The smallest ``t >= 2`` with ``(q^t - 1)/(q - 1) >= d``."""
    t = 2
    while points(q, t) < d:
        t += 1
    return t


def pgr_constants(epsilon: float, q: int, t: int) -> tuple[float, float, float]:
    """``(P(u | v) on v's hyperplane, p*, q*)`` of PGR over ``P^(t-1)(F_q)``, written with
    ``e^-eps`` so that eps = inf (report uniform on the hyperplane) is exact."""
    size, c_set, c_int = points(q, t), points(q, t - 1), points(q, t - 2)
    tail = exp_neg(epsilon)  # e^-eps: multiply Z and e^eps by it
    on = 1.0 / (c_set + tail * (size - c_set))
    off = tail * on
    return on, c_set * on, c_int * on + (c_set - c_int) * off


class PGRChannel(Channel):
    """``P(u | v) = off + (on - off) [<u, v> = 0]`` over the K points, as an operator for EM.

    ``forward(theta)[u] = off sum(theta) + (on - off) sum_{v on u's hyperplane} theta_v`` and
    ``backward(w)[v] = off sum(w) + (on - off) sum_{u on v's hyperplane} w_u``: incidence is
    symmetric, so both are the decoder's incidence sums, O(K q t); small channels (K d <= 2^21)
    keep the dense matrix instead.
    """

    #: Channels with at most this many entries keep the dense matrix: EM calls forward and
    #: backward thousands of times, and a matrix product beats the DP's NumPy passes there.
    _DENSE_MAX = 1 << 21

    def __init__(self, space: ProjectiveSpace, d: int, on: float, off: float):
        self.space = space
        self.n_items, self.n_reports = int(d), int(space.size)
        self.on, self.off = float(on), float(off)
        self._matrix = None
        if self.n_items * self.n_reports <= self._DENSE_MAX:
            u, v = space.vectors(np.arange(self.n_reports)), space.vectors(np.arange(self.n_items))
            self._matrix = np.where((u @ v.T) % space.q == 0, self.on, self.off)

    def forward(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        if self._matrix is not None:
            return self._matrix @ theta
        padded = np.zeros(self.n_reports)
        padded[: self.n_items] = theta
        return self.off * theta.sum() + (self.on - self.off) * self.space.incidence(padded, self.n_reports)

    def backward(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if self._matrix is not None:
            return self._matrix.T @ w
        return self.off * w.sum() + (self.on - self.off) * self.space.incidence(w, self.n_items)


class PGR(Oracle):
    """Projective Geometry Response: report a point, likelier (x e^eps) on the item's hyperplane.

    - **Per-user path** (:meth:`perturb`): w.p. ``p*`` a point uniform on v's hyperplane, else a
      point uniform off it; each drawn as a uniform vector with ``<x, v>`` fixed (one coordinate
      solved), O(t) per user, vectorized (:meth:`._projective.ProjectiveSpace.sample`). Reports are
      point ranks in ``[0, K)``: ``ceil(log2 K)`` bits, [FNNT22]'s private-coin communication.
    - **Server**: the report histogram, then the support counts of all d items by the dynamic
      program of [FNNT22, DP] in O(K q t) time (:func:`._projective.incidence_sums`), not the
      O(K d) of summing each item's hyperplane; exact integer arithmetic.
    - **Aggregate path** (:meth:`sample_support_counts`): the report histogram drawn **exactly in
      distribution**, then decoded as above. ``P(. | v)`` is the mixture "w.p. rho uniform on v's
      hyperplane, else uniform on all K points" with ``rho = (e^eps - 1) c_set / Z`` (on the
      hyperplane rho / c_set + (1 - rho)/K = e^eps/Z; off it (1 - rho)/K = 1/Z). So
      ``B_v ~ Binomial(n_v, rho)`` users per item land uniformly on its hyperplane, and the other
      ``n - sum B`` land as one ``Multinomial(., uniform on K)``. An item with ``B_v >= c_set``
      gets one ``Multinomial(B_v, uniform on its c_set points)``; the others' users are sampled
      like the per-user path. Cost O(K q t + rho n t) at worst (rho is about 1/2 at the default q);
      a skewed population costs less (its big items are multinomials).

    Reports take K values, so PGR exposes its channel (:class:`PGRChannel`) and report histogram
    for EM-family post-processors, on the per-user path (see :meth:`_sample_histogram`).

    ``epsilon = inf`` needs an explicit q (the report is then uniform on the hyperplane).
    """

    name = "pgr"
    exact_aggregate: ClassVar[bool] = True
    params = (
        Param(
            "q",
            int,
            0,
            "field size, a prime; 0 means the better of the two primes around e^eps + 1",
            min=0,
            max=MAX_Q,
            forbid=(1,),
        ),
        aggregate_param("about 0.7-1.1 s at d = 41,270, n = 8M"),
    )

    def __init__(self, d: int, epsilon: float, q: int = 0, **params):
        super().__init__(d=d, epsilon=epsilon, q=q, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        if q and not (2 <= q <= MAX_Q and is_prime(int(q))):
            raise ParamError(f"oracle 'pgr': q must be 0 (automatic) or a prime in [2, {MAX_Q}], got {q}", "q")
        field = int(q) if q else default_field(self.epsilon, self.d)
        t = dimension(self.d, field)
        if points(field, t) > MAX_POINTS:
            raise ParamError(
                f"oracle 'pgr': q={field} needs {points(field, t):,} points (t={t}) to hold d={self.d} items, "
                f"more than {MAX_POINTS:,}; give a smaller prime q",
                "q",
            )
        if points(field, t) * field * t > MAX_DECODE_WORK:
            raise ParamError(
                f"oracle 'pgr': q={field} at d={self.d} needs K={points(field, t):,} points (t={t}); decoding "
                f"takes about K q t = {points(field, t) * field * t:.2g} operations per estimate, more than "
                f"{MAX_DECODE_WORK:.2g}; give a smaller prime q",
                "q",
            )
        #: the projective space: ``space.q``, ``space.t``, ``space.size`` (K) points
        self.space = ProjectiveSpace(field, t)
        self._on, self._p, self._q = pgr_constants(self.epsilon, field, t)

    @functools.cached_property
    def _items(self) -> np.ndarray | None:
        """The items' vectors (d x t), kept when small: the samplers look them up per user. Built on
        first use, so that constructing the oracle stays O(1) (``validate`` builds every oracle at
        every d and epsilon of a spec; this table is 50 ms at d = 41,270)."""
        return self.space.vectors(np.arange(self.d)) if self.d * self.space.t <= _ITEM_TABLE_MAX else None

    def tags(self) -> OracleTags:
        # A report supports an item when its hyperplane holds the item's point: Bernoulli(p*) for the
        # user's own item, Bernoulli(q*) for any other, so ibu's per-item likelihood applies on the
        # aggregate path too (which draws no report histogram).
        return dataclasses.replace(super().tags(), bernoulli_support=True, exact_aggregate=self.aggregate == "exact")

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    @property
    def hyperplane_weight(self) -> float:
        """rho: the weight of "uniform on the item's hyperplane" in the mixture form of P(. | v)."""
        off = self._on * exp_neg(self.epsilon)
        return (self._on - off) * self.space.on_hyperplane

    @property
    def chunk_users(self) -> int:
        """Users per chunk: a user's sampling temporaries are t integers, keep a chunk near
        :data:`_CHUNK_ELEMENTS` of them (t = 11 at eps = 1 and d = 41,270)."""
        return max(1, _CHUNK_ELEMENTS // self.space.t)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Report ranks (ints in [0, K)) of users holding ``values``."""
        v = as_items(values, self.d)
        inside = rng.random(v.size) < self._p
        return self.space.sample(v, inside, rng, self._items)

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        return self._decode(self._histogram(reports))

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The support counts through the exact report histogram, or with ``aggregate: marginal``
        each from its exact law, ``Binomial(n_v, p*) + Binomial(n - n_v, q*)``, independently
        (declared approximate: :func:`._common.aggregate_param`). The exact path draws the on-
        hyperplane users' points (per user, or a multinomial over an item's c_set points): its
        cost grows with the users on the hyperplanes, not O(d) calls."""
        if self.aggregate == "marginal":
            return independent_binomials(as_counts(true_counts, self.d), self._p, self._q, rng)
        return self._decode(self._sample_histogram(true_counts, rng))

    # -- finite output space --------------------------------------------------------------------
    def channel(self) -> PGRChannel:
        return PGRChannel(self.space, self.d, self._on, self._on * exp_neg(self.epsilon))

    def report_histogram(self, reports: np.ndarray) -> np.ndarray:
        return self._histogram(reports)

    def support_counts_from_histogram(self, histogram: np.ndarray) -> np.ndarray:
        return self._decode(np.asarray(histogram, dtype=np.int64))

    def _sample_histogram(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The K report counts, exactly in distribution (the mixture of the class docstring).

        Not declared as ``sample_report_histogram`` (the ``aggregate_histogram`` tag): the
        conformance kit would then enumerate the exact law of every report histogram of its 4-user
        population, ~400,000 of them at K = 54 (eps = 4), about 10 s per run of the kit. So EM-family
        post-processors need ``simulation: per-user`` with PGR (``ldpbench validate`` says so);
        renaming this method is all it takes to offer them the aggregate path.
        """
        counts = as_counts(true_counts, self.d)
        on_plane = rng.binomial(counts, self.hyperplane_weight)
        rest = int(counts.sum() - on_plane.sum())
        size = self.space.size
        if rest < 4 * size:
            hist = np.bincount(rng.integers(0, size, size=rest), minlength=size).astype(np.int64)
        else:
            hist = rng.multinomial(rest, np.full(size, 1.0 / size)).astype(np.int64)
        # An item with at least c_set users on its hyperplane: one Multinomial over the hyperplane's
        # points (c_set binomials) costs less than drawing each user's point.
        crowded = np.flatnonzero(on_plane >= _MULTINOMIAL_FROM * self.space.on_hyperplane)
        hist += self._hyperplane_multinomials(crowded, on_plane[crowded], rng)
        on_plane[crowded] = 0
        total = int(on_plane.sum())
        ends = np.cumsum(on_plane)
        chunk = self.chunk_users
        for start in range(0, total, chunk):
            users = np.arange(start, min(total, start + chunk), dtype=np.int64)
            items = np.searchsorted(ends, users, side="right")
            hist += self._histogram(self.space.sample(items, np.ones(items.size, dtype=bool), rng, self._items))
        return hist

    def _hyperplane_multinomials(self, items: np.ndarray, users: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Histogram of ``users[i]`` points drawn uniformly on the hyperplane of ``items[i]``, as one
        ``Multinomial(users[i], uniform on its c_set points)`` per item, in blocks of items."""
        c_set, size = self.space.on_hyperplane, self.space.size
        hist = np.zeros(size, dtype=np.int64)
        step = max(1, self.chunk_users // c_set)
        for start in range(0, items.size, step):
            block = slice(start, start + step)
            draws = rng.multinomial(users[block], np.full(c_set, 1.0 / c_set))
            where = self.space.hyperplane_points(items[block])
            # float weights hold these counts exactly (each at most n < 2^53)
            hist += np.rint(np.bincount(where.ravel(), weights=draws.ravel(), minlength=size)).astype(np.int64)
        return hist

    def _histogram(self, reports: np.ndarray) -> np.ndarray:
        return np.bincount(np.asarray(reports, dtype=np.int64), minlength=self.space.size).astype(np.int64)

    def _decode(self, histogram: np.ndarray) -> np.ndarray:
        """Support counts of the d items: reports on each item's hyperplane ([FNNT22, DP])."""
        return self.space.incidence(histogram, self.d)

    # -- exact audit ------------------------------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """All K reports: ``S[u, v] = <u, v> = 0``, ``P[u, v] = e^eps/Z`` on S, ``1/Z`` off it."""
        if self.space.size > _TABLE_MAX_POINTS:
            raise ValueError(f"PGR output table: K={self.space.size} points is too many to enumerate")
        S = self.support_matrix(np.arange(self.space.size))
        off = self._on * exp_neg(self.epsilon)
        return np.where(S, self._on, off), S

    def output_rows(self, reports: np.ndarray) -> np.ndarray:
        """Row of :meth:`output_table` of each report (the report itself)."""
        return np.asarray(reports, dtype=np.int64)

    def support_matrix(self, reports: np.ndarray) -> np.ndarray:
        """``(n_users, d)`` bools: report u supports item v iff ``<u, v> = 0`` mod q."""
        u = self.space.vectors(np.asarray(reports, dtype=np.int64))
        v = self.space.vectors(np.arange(self.d))
        return (u @ v.T) % self.space.q == 0


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(PGR)
