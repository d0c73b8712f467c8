"""Which rows of a group could be the best? A model confidence set over paired repeats.

Testing each row against the best *after* picking the best from the same repeats (Holm over
``k - 1`` Wilcoxon tests) calls equal rows worse more often than its level: measured at
alpha = 0.05 with identical rows, about 7% of groups of 4 and 13-15% of groups of 10
(docs/statistics.md). The model confidence set of Hansen, Lunde & Nason (Econometrica 79(2),
2011) controls that error under selection: with probability at least ``1 - alpha`` it keeps
*every* row whose expected value equals the best one (their Theorem 1).

The procedure (their §3, the range statistic ``T_R``), on a loss matrix (rows x repeats):

1. For every pair (i, j) the per-repeat difference ``d_ij = loss_i - loss_j`` on the repeats both
   have, and its studentized mean ``t_ij = mean(d_ij) / (sd(d_ij) / sqrt(n_ij))``.
2. Equivalence test of the current set M: ``T_M = max_{i,j in M} |t_ij|``. Its null distribution
   comes from **sign flips of whole repeats** (one Rademacher sign per repeat, shared by every
   pair, so the dependence between pairs is kept), the statistic recomputed, studentization
   included, on every flipped sample. For two rows this is the studentized sign-flip test:
   exact when the differences are symmetric about 0 (identical pipelines are exchangeable within
   a repeat), asymptotically valid without symmetry (Janssen, Statist. Probab. Lett. 1999); for
   more rows it is the Rademacher multiplier bootstrap of a maximum of studentized means
   (Chernozhukov, Chetverikov & Kato, Ann. Statist. 2013), valid as repeats grow. Up to
   :data:`EXACT_UP_TO` repeats every sign vector is enumerated (the p-value is exact); beyond,
   :data:`FLIPS` random sign vectors are drawn from a seed derived from the data, so the same
   rows give the same marks.
3. If ``p_M <= alpha`` the row most significantly worse than another row of M
   (``argmax_i max_j t_ij``) leaves, and the test repeats on the smaller set.

Every row gets the MCS p-value: the largest ``p_M`` up to the step that removes it (HLN Def. 2);
the last row standing gets 1. The set at level alpha is the rows whose p-value exceeds alpha.
The sets are nested and each ``T_M`` is a maximum over the pairs of M, so the elimination order
depends on the observed statistics only and every step reads one table of flipped statistics.

**What it cannot do.** Flipping every sign gives the same statistic, so no p-value is below
``2 / 2^R`` with R repeats (:func:`smallest_p`): fewer than :func:`min_repeats` repeats can call
no row worse at alpha, whatever the data.
"""

from __future__ import annotations

import hashlib
import math
from itertools import product

import numpy as np

#: Random sign vectors drawn when the repeats are too many to enumerate.
FLIPS = 2000
#: Up to this many repeats all 2^R sign vectors are enumerated (2^11 = 2,048 ~ FLIPS).
EXACT_UP_TO = 11
#: Differences at most this times the pair's largest magnitude are rounding (another summation
#: order), not a difference: identical pipelines stay identical.
RELATIVE_ZERO = 1e-12
#: A flipped statistic within this relative distance of the observed one counts as "at least as
#: large": the all-ones sign vector must reproduce the observed statistic despite a different
#: summation order.
_TIE = 1e-9


def smallest_p(repeats: int) -> float:
    """The smallest p-value the sign-flip test can return with ``repeats`` repeats: 2 / 2^R
    (the observed signs and their negation give the same maximum)."""
    return 1.0 if repeats < 1 else 2.0 ** (1 - repeats)


def min_repeats(alpha: float) -> int:
    """Fewest repeats with which a row can be called worse at level ``alpha``: the smallest R with
    ``2 / 2^R <= alpha`` (6 at alpha = 0.05, 8 at 0.01)."""
    r = max(1, math.ceil(1 + math.log2(1 / alpha)) - 1)
    while smallest_p(r) > alpha:
        r += 1
    return r


def data_seed(values: np.ndarray) -> int:
    """A seed from the rows' values, independent of their order: the same rows, the same flips."""
    canonical = np.where(np.isnan(values), np.inf, values).astype(np.float64)
    digest = hashlib.blake2b(digest_size=8)
    for row in sorted(r.tobytes() for r in canonical):
        digest.update(row)
    return int.from_bytes(digest.digest(), "little")


def _signs(repeats: int, seed: int) -> tuple[np.ndarray, bool]:
    """Sign vectors (rows) and whether they are all 2^R of them (then the first is all +1)."""
    if repeats <= EXACT_UP_TO:
        return np.array(list(product((1.0, -1.0), repeat=repeats))), True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([1.0, -1.0]), size=(FLIPS, repeats)), False


def _squared_t(sums: np.ndarray, squares: np.ndarray, count: np.ndarray) -> np.ndarray:
    """t^2 of the pair differences' mean, t = mean / (sd / sqrt(n)), from their sums.

    With u = sum^2 / (n * sum of squares), t^2 = (n - 1) u / (1 - u): the same number as the
    textbook formula in five array passes (the flipped table has flips x pairs entries), into two
    buffers: the same operations in the same order as ``(count - 1) * u / (1.0 - u)`` with ``u =
    min(sums * sums * scale, 1)``, so the same bits, without a fresh table per pass (2.3 ms against
    5.4 ms for the Kosarak sweep's 1,024 x 946 tables). 0 for an identically zero pair or fewer
    than 2 repeats; inf for a constant non-zero difference (a sure one).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where((count >= 2) & (squares > 0), 1.0 / (count * squares), 0.0)
        u = np.multiply(sums, sums)
        u *= scale
        np.minimum(u, 1.0, out=u)
        t2 = np.multiply(count - 1, u)
        np.subtract(1.0, u, out=u)
        t2 /= u
        return t2


#: Below this many multiply-adds the flipped sums skip BLAS: waking its threads costs more
#: (milliseconds on a busy machine) than a small group's whole product.
_BLAS_FROM = 4_000_000


def _flip_sums(signs: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """Sum over repeats of every pair's differences under every sign vector (flips x pairs)."""
    if signs.size * diff.shape[0] < _BLAS_FROM:
        return np.einsum("br,pr->bp", signs, diff)
    return signs @ np.ascontiguousarray(diff.T)


def confidence_set_p_values(loss: np.ndarray, seed: int | None = None) -> np.ndarray:
    """The MCS p-value of every row of ``loss`` (rows x repeats, lower is better, NaN missing).

    A row with no value gets NaN; the row left last gets 1. Rows whose p-value exceeds alpha form
    the model confidence set at level alpha. ``seed`` defaults to :func:`data_seed` of ``loss``.
    """
    loss = np.asarray(loss, dtype=float)
    k, repeats = loss.shape
    p_row = np.full(k, np.nan)
    rows = np.flatnonzero(~np.all(np.isnan(loss), axis=1))
    if rows.size == 0:
        return p_row
    if rows.size == 1:
        p_row[rows] = 1.0
        return p_row
    sub = loss[rows]
    m = rows.size
    iu, ju = np.triu_indices(m, 1)
    valid = ~np.isnan(sub[iu]) & ~np.isnan(sub[ju])  # pairs x repeats
    a, b = np.nan_to_num(sub[iu]), np.nan_to_num(sub[ju])
    diff = np.where(valid, a - b, 0.0)
    magnitude = np.maximum(np.abs(a), np.abs(b)).max(axis=1, initial=0.0)
    diff = np.where(np.abs(diff) <= RELATIVE_ZERO * magnitude[:, None], 0.0, diff)
    count = valid.sum(axis=1).astype(float)
    squares = np.sum(diff * diff, axis=1)
    sums = diff.sum(axis=1)
    t2_obs = _squared_t(sums, squares, count)
    t_obs = np.sign(sums) * np.sqrt(t2_obs)

    # Elimination order from the observed statistics alone: t_ij > 0 means i is worse than j.
    oriented = np.zeros((m, m))
    oriented[iu, ju], oriented[ju, iu] = t_obs, -t_obs
    alive = np.ones(m, dtype=bool)
    order = []
    for _ in range(m - 1):
        worst_against = np.where(alive[None, :], oriented, -np.inf).max(axis=1)
        worst_against[~alive] = -np.inf
        e = int(np.argmax(worst_against))
        order.append(e)
        alive[e] = False
    step_of = np.full(m, m - 1)  # the last row standing outlives every step
    step_of[order] = np.arange(m - 1)
    pair_step = np.minimum(step_of[iu], step_of[ju])  # the last step (0-based) whose set holds the pair

    # T_M for the nested sets: a pair belongs to every set up to its own step, so the maximum
    # over the pairs of each step (one segment of the pairs sorted by step; every step removes a
    # row from a pair with the row left last, so no segment is empty) and a reverse running
    # maximum give every T_M at once.
    by_step = np.argsort(pair_step, kind="stable")
    starts = np.searchsorted(pair_step[by_step], np.arange(m - 1))

    def per_step(stat: np.ndarray) -> np.ndarray:  # stat: (..., pairs) -> (..., steps)
        seg = np.maximum.reduceat(stat[..., by_step], starts, axis=-1)
        return np.maximum.accumulate(seg[..., ::-1], axis=-1)[..., ::-1]

    signs, exact = _signs(repeats, data_seed(loss) if seed is None else seed)
    flipped = _squared_t(_flip_sums(signs, diff), squares, count)  # flips x pairs; t^2 orders as |t|
    null = per_step(flipped)
    # Enumerated, the first sign vector is all +1: the observed statistic computed exactly as its
    # flips are, so it and its negation always count and no p falls below 2 / 2^R, however close
    # to constant (t^2 near infinity) a difference is.
    observed = null[0] if exact else per_step(t2_obs[None, :])[0]
    at_least = np.sum(null >= observed * (1 - _TIE), axis=0)
    p_step = at_least / len(signs) if exact else (1 + at_least) / (1 + len(signs))
    p_step = np.where(observed > 0, p_step, 1.0)  # identical rows: nothing to test
    p_running = np.minimum(np.maximum.accumulate(p_step), 1.0)
    p_sub = np.ones(m)
    p_sub[order] = p_running
    p_row[rows] = p_sub
    return p_row
