"""Exact aggregate sampler of Subset Selection's support counts (private).

The support counts of SS are sums of users' k-subsets; they are negatively dependent across items
(every report holds exactly k items), so independent binomials would get their joint law wrong.
This module draws them from their exact joint law in O(d * w) time, where w is the width of the
spread of users' "items still to choose" (about 12 sqrt(k) at most; O(1) NumPy calls per item).

**Mixture form.** A report containing v w.p. p* (v and k - 1 others uniformly), else k others, is
the same law as: w.p. ``rho = (p* - k/d) / (1 - k/d)`` a uniform k-subset *containing* v, else a
uniform k-subset of the whole domain (which contains v w.p. k/d): both put probability p* on
"contains v" and are uniform given it. So ``K_v ~ Binomial(n_v, rho)`` users are "pending" (own
item v plus k - 1 uniform others), the other ``n - sum K`` users are "free" (k uniform items).

**Items one at a time.** Walk the items w = 0, 1, ..., d - 1 with R = d - w items left. A free user
needing r more items includes w w.p. r / R (a uniform r-subset of the R items left); a pending
user whose own item is still ahead, needing r more *others*, includes w w.p. r / (R - 1). Users
with the same (kind, r) are exchangeable, so per item it suffices to draw binomials per group and
move the includers from r to r - 1. The K_w pending users whose own item is w: pending users'
histories do not depend on which of the remaining items is their own, so their r values are a
simple random sample of K_w pending users (a multivariate hypergeometric draw); they include w,
take no part in w's other draws, and become free with the same r for the items after w. The counts so drawn have exactly the per-user law, jointly.
"""

from __future__ import annotations

import numpy as np


def subset_support_counts(counts: np.ndarray, k: int, p_star: float, rng: np.random.Generator) -> np.ndarray:
    """Support counts of Subset Selection (subset size ``k``, inclusion probability ``p_star``)
    for users holding the items given by ``counts``, drawn from their exact joint law."""
    counts = np.asarray(counts, dtype=np.int64)
    d = counts.size
    rho = min(1.0, max(0.0, (p_star - k / d) / (1.0 - k / d)))
    own = rng.binomial(counts, rho)
    free = np.zeros(k + 1, dtype=np.int64)
    pending = np.zeros(k + 1, dtype=np.int64)
    free[k] = int(counts.sum() - own.sum())
    pending[k - 1] = int(own.sum())
    waiting = int(own.sum())  # pending users left
    need = np.arange(k + 1, dtype=np.float64)
    out = np.empty(d, dtype=np.int64)
    lo, hi = k - 1, k  # every nonzero group lies in [lo, hi]
    for w in range(d):
        left = d - w
        span = slice(lo, hi + 1)
        mine = None
        if own[w]:  # they hold w: set aside, free (same r) once w is done
            if own[w] == waiting:
                mine = pending[span].copy()
            else:
                mine = rng.multivariate_hypergeometric(pending[span], int(own[w]), method="marginals")
            pending[span] -= mine
            waiting -= int(own[w])
        supported = int(own[w])
        # Groups beyond the items left are empty; clip so their probability stays a probability.
        moves = [(free, rng.binomial(free[span], np.minimum(need[span] / left, 1.0)))]
        if waiting:
            moves.append((pending, rng.binomial(pending[span], np.minimum(need[span] / (left - 1), 1.0))))
        for group, took in moves:
            supported += int(took.sum())
            group[span] -= took
            if lo > 0:  # r -> r - 1
                group[lo - 1 : hi] += took
            else:  # nobody in group 0 takes anything
                group[0:hi] += took[1:]
        out[w] = supported
        if mine is not None:
            free[span] += mine
        # The window moves down by at most one group per item; trim its empty ends.
        lo = max(lo - 1, 0)
        while lo < hi and not (free[lo] or pending[lo]):
            lo += 1
        while hi > lo and not (free[hi] or pending[hi]):
            hi -= 1
    return out
