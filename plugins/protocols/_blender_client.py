"""Blender's client side: LocalAlg, its exact report law, and EstimateClientProbabilities.

[A17] Fig. 6 (LocalAlg), Fig. 5 and Observation 1 (denoising), Theorem 5 (variance), with the
epsilons restored as in docs/algorithms.md §5.3-5.4. All arrays are indexed by the head list's slots
(:class:`~._blender_headlist.HeadList`): query ``j`` owns slots ``offsets[j] .. offsets[j] + k_q[j] - 1``.

A client holding the record in slot ``s = (j, l)`` reports

- w.p. ``1 - t``: a query ``j' != j`` uniformly, then a URL of ``j'`` uniformly;
- else w.p. ``1 - t_j``: query ``j`` with a URL ``l' != l`` uniformly;
- else ``s`` itself,

so ``P(s' | s)`` is known exactly (:func:`report_matrix`); that law drives the aggregate sampler,
the privacy tests and the variances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpbench.engine.simulate import DEFAULT_CHUNK_USERS, user_chunks

from ._blender_headlist import HeadList

#: Variance estimators of the client record estimates: ``exact`` is the plug-in unbiased variance
#: of the linear estimator (docs/algorithms.md §5.4); ``paper`` is [A17] Theorem 5 as printed.
CLIENT_VARIANCES = ("exact", "paper")


@dataclass(frozen=True)
class LocalAlgConstants:
    """LocalAlg's budget split and truthful-report probabilities ([A17] Fig. 6 lines 2-6)."""

    eps_q: float
    eps_u: float
    delta_q: float
    delta_u: float
    t: float  #: P(report the true query)
    t_q: np.ndarray  #: P(report the true URL | true query reported), per query (1 for <*, *>)
    k: int  #: number of queries including <*, *>
    k_q: np.ndarray  #: URLs per query including <q, *>

    @property
    def e_q(self) -> float:
        """P(report a given other query) = (1 - t) / (k - 1)."""
        return (1 - self.t) / (self.k - 1) if self.k > 1 else 0.0


def _truthful(eps: float, delta: float, m: np.ndarray) -> np.ndarray:
    """``(e^eps + (delta/2)(m - 1)) / (e^eps + m - 1)``, divided through by e^eps (no overflow)."""
    m = np.asarray(m, dtype=float)
    damp = math.exp(-eps)
    return (1 + (delta / 2) * (m - 1) * damp) / (1 + (m - 1) * damp)


def local_alg_constants(epsilon: float, delta: float, m_c: int, f_c: float, head_list: HeadList) -> LocalAlgConstants:
    """``eps' = eps/m_C``, ``eps_Q = f_C eps'``, ``eps_U = eps' - eps_Q`` (same split of delta), ``t``, ``t_q``."""
    eps1, delta1 = epsilon / m_c, delta / m_c
    eps_q, delta_q = f_c * eps1, f_c * delta1
    eps_u, delta_u = eps1 - eps_q, delta1 - delta_q
    k_q = head_list.url_counts
    return LocalAlgConstants(
        eps_q=eps_q,
        eps_u=eps_u,
        delta_q=delta_q,
        delta_u=delta_u,
        t=float(_truthful(eps_q, delta_q, np.array(head_list.k))),
        t_q=_truthful(eps_u, delta_u, k_q),
        k=head_list.k,
        k_q=k_q,
    )


def report_matrix(head_list: HeadList, c: LocalAlgConstants) -> np.ndarray:
    """``P[s, s']`` = probability that a client in slot ``s`` reports slot ``s'`` (rows sum to 1)."""
    j = head_list.query_of_slot
    same_query = j[:, None] == j[None, :]
    other_query = (1 - c.t) / ((c.k - 1) * c.k_q[j]) if c.k > 1 else np.zeros(j.size)
    k_own = c.k_q[j][:, None]
    t_own = c.t_q[j][:, None]
    other_url = np.divide(c.t * (1 - t_own), k_own - 1, out=np.zeros_like(t_own), where=k_own > 1)
    P = np.where(same_query, other_url, other_query[None, :])
    P[np.diag_indices_from(P)] = c.t * c.t_q[j]
    return P


def local_alg(slots: np.ndarray, head_list: HeadList, c: LocalAlgConstants, rng: np.random.Generator) -> np.ndarray:
    """LocalAlg ([A17] Fig. 6) for many clients at once: their reported slots.

    ``slots`` are the clients' true slots (records already mapped to ``<q, *>`` / ``<*, *>``, Fig. 6
    lines 8-11). Vectorized over clients; uniform choices use ``floor(U * m)``.
    """
    slots = np.asarray(slots, dtype=np.int64)
    n = slots.size
    j = head_list.query_of_slot[slots]
    k_q = c.k_q
    # Query stage: w.p. 1 - t a uniform other query, then a uniform URL of that query.
    switch_query = rng.random(n) >= c.t
    new_j = (j + 1 + (rng.random(n) * (c.k - 1)).astype(np.int64)) % c.k
    new_l = (rng.random(n) * k_q[new_j]).astype(np.int64)
    # URL stage (query kept): w.p. 1 - t_q a uniform other URL of the same query.
    l = slots - head_list.offsets[j]
    switch_url = rng.random(n) >= c.t_q[j]
    other_l = (l + 1 + (rng.random(n) * (k_q[j] - 1)).astype(np.int64)) % k_q[j]
    out = np.where(switch_url, head_list.offsets[j] + other_l, slots)
    return np.where(switch_query, head_list.offsets[new_j] + new_l, out)


def report_histogram_per_user(
    slot_counts: np.ndarray,
    head_list: HeadList,
    c: LocalAlgConstants,
    rng: np.random.Generator,
    chunk: int = DEFAULT_CHUNK_USERS,
) -> np.ndarray:
    """Histogram of the clients' reports, running :func:`local_alg` on every client (chunked)."""
    hist = np.zeros(head_list.n_slots, dtype=np.int64)
    for slots in user_chunks(slot_counts, chunk):
        hist += np.bincount(local_alg(slots, head_list, c, rng), minlength=head_list.n_slots)
    return hist


def report_histogram_aggregate(
    slot_counts: np.ndarray, head_list: HeadList, c: LocalAlgConstants, rng: np.random.Generator
) -> np.ndarray:
    """The same histogram drawn from its exact law: a sum of ``Multinomial(n_s, P[s, :])`` over slots."""
    slot_counts = np.asarray(slot_counts, dtype=np.int64)
    occupied = np.flatnonzero(slot_counts)
    if occupied.size == 0:
        return np.zeros(head_list.n_slots, dtype=np.int64)
    P = report_matrix(head_list, c)[occupied]
    P /= P.sum(axis=1, keepdims=True)  # guard the multinomial against round-off in the row sums
    return rng.multinomial(slot_counts[occupied], P).sum(axis=0).astype(np.int64)


@dataclass(frozen=True, eq=False)
class ClientEstimate:
    """Denoised client estimates (fractions) per slot and per query, with variance estimates."""

    p_slot: np.ndarray
    variance_slot: np.ndarray
    p_query: np.ndarray  #: per query, <*, *> last
    variance_query: np.ndarray
    p_star: float  #: everything outside the head list's records: free <q, *> slots plus <*, *>
    variance_star: float
    n_reports: int


def _coefficients(head_list: HeadList, c: LocalAlgConstants) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per slot ``(a, b, const)`` with ``p_hat_slot = a r_slot + b r_query + const`` (docs/algorithms.md §5.4).

    With ``A = t (t_q - (1 - t_q)/(k_q - 1))`` and ``B = (1 - t)/((k - 1) k_q) - t (1 - t_q)/(k_q - 1)``:
    ``p_hat = (r_slot + B p_hat_q - (1 - t)/((k - 1) k_q)) / A`` and ``p_hat_q = (r_q - e_Q)/(t - e_Q)``.
    The single slot of ``<*, *>`` is its query: ``a = 0, b = 1/(t - e_Q)``.
    """
    j = head_list.query_of_slot
    k_q, t_q = c.k_q[j].astype(float), c.t_q[j]
    den = c.t - c.e_q
    real = k_q > 1
    safe_kq = np.where(real, k_q, 2.0)
    A = c.t * (t_q - (1 - t_q) / (safe_kq - 1))
    spread = (1 - c.t) / ((c.k - 1) * safe_kq)
    B = spread - c.t * (1 - t_q) / (safe_kq - 1)
    a = np.where(real, 1 / A, 0.0)
    b = np.where(real, B / (A * den), 1 / den)
    const = np.where(real, (-B * c.e_q / den - spread) / A, -c.e_q / den)
    return a, b, const


def _linear_variance(weights: np.ndarray, r: np.ndarray, n: int) -> float:
    """Unbiased variance estimate of ``sum_s w_s r_hat_s`` from one multinomial sample of size n.

    Per report ``Z = w[slot]``: ``Var(mean Z) = (E Z^2 - (E Z)^2)/n``; plugging in the empirical
    frequencies and dividing by ``n - 1`` instead of ``n`` makes it unbiased.
    """
    m1 = float(weights @ r)
    m2 = float((weights**2) @ r)
    return (m2 - m1**2) / (n - 1)


def estimate_client(
    histogram: np.ndarray, head_list: HeadList, c: LocalAlgConstants, variance: str = "exact"
) -> ClientEstimate:
    """EstimateClientProbabilities ([A17] Fig. 5): denoise the reports; estimate the variances.

    Unbiased for every slot and query (Observation 1). ``variance="exact"``: for a record
    ``Var = [(a+b)^2 r_qu + b^2 (r_q - r_qu) - (a r_qu + b r_q)^2] / N`` with ``r`` and ``N``
    replaced by the report frequencies and ``N - 1`` (docs/algorithms.md §5.4); ``"paper"``: Theorem 5
    as printed (its covariance term does not shrink with N; reported, never relied on).
    """
    if variance not in CLIENT_VARIANCES:
        raise ValueError(f"unknown client variance {variance!r}; expected one of {CLIENT_VARIANCES}")
    hist = np.asarray(histogram, dtype=np.int64)
    n = int(hist.sum())
    if n < 2:
        raise ValueError(f"EstimateClientProbabilities needs at least 2 client reports, got {n}")
    r = hist / n
    j = head_list.query_of_slot
    r_query = np.bincount(j, weights=r, minlength=c.k)
    if c.k == 1:  # nothing but <*, *>: everything is outside the head list
        one = np.ones(1)
        return ClientEstimate(one, np.zeros(1), one, np.zeros(1), 1.0, 0.0, n)
    den = c.t - c.e_q
    p_query = (r_query - c.e_q) / den
    var_query = r_query * (1 - r_query) / ((n - 1) * den**2)
    a, b, const = _coefficients(head_list, c)
    rq = r_query[j]
    p_slot = a * r + b * rq + const
    if variance == "exact":
        var_slot = ((a + b) ** 2 * r + b**2 * (rq - r) - (a * r + b * rq) ** 2) / (n - 1)
    else:
        var_slot = _theorem5_printed(r, rq, var_query[j], head_list, c, n)
    # A query with one slot (<*, *>, or a query whose only listed record is (q, *)): the record
    # estimate is the query estimate, and so is its variance (Theorem 5 is 0/0 at k_q = 1).
    single = c.k_q[j] == 1
    var_slot[single] = var_query[j[single]]
    # Equal in exact arithmetic; copied so that a (q, *) record's estimate is bitwise its query's
    # (<*, *> keeps its own round-off, as before wildcard records existed).
    listed = single & (j < c.k - 1)
    p_slot[listed] = p_query[j[listed]]
    # Everything outside the head list's records is the sum of the outside slots: the <q, *>
    # slots that are not a listed (q, *) record, and <*, *>. Each brings its own `a` on its slot
    # and its query's `b` on every slot of that query (a query has at most one <q, *>).
    star_slots = head_list.outside_slots
    counted = np.zeros(c.k, dtype=bool)
    counted[j[star_slots]] = True
    w = np.where(counted[j], b, 0.0)
    w[star_slots] += a[star_slots]
    return ClientEstimate(
        p_slot=p_slot,
        variance_slot=var_slot,
        p_query=p_query,
        variance_query=var_query,
        p_star=float(p_slot[star_slots].sum()),
        variance_star=_linear_variance(w, r, n),
        n_reports=n,
    )


def _theorem5_printed(
    r: np.ndarray, rq: np.ndarray, var_q: np.ndarray, head_list: HeadList, c: LocalAlgConstants, n: int
) -> np.ndarray:
    """[A17] Theorem 5 as printed: ``(1/A^2)[r(1-r)/(N-1) + B^2 var_q + 2N/(N-1) B (k-2+t)/(kt-1) r]``."""
    j = head_list.query_of_slot
    k_q, t_q = c.k_q[j].astype(float), c.t_q[j]
    safe_kq = np.where(k_q > 1, k_q, 2.0)
    A = c.t * (t_q - (1 - t_q) / (safe_kq - 1))
    B = (1 - c.t) / ((c.k - 1) * safe_kq) - (c.t - c.t * t_q) / (safe_kq - 1)
    cov = 2 * n / (n - 1) * B * (c.k - 2 + c.t) / (c.k * c.t - 1) * r
    return (r * (1 - r) / (n - 1) + B**2 * var_q + cov) / A**2
