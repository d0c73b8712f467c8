"""EstimateOptinProbabilities: the Laplace mechanism on the opt-in users' record counts.

[A17] Fig. 4 and Theorem 4 (docs/algorithms.md §5.2; lines 4-11 and 14-15 of the figure were garbled in
the extracted text and follow Theorem 4 and the surrounding prose). The opt-in users of T are
trusted with their raw records (central model); the released vector is (eps, 0)-DP.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._blender_headlist import laplace_scale


def optin_variance(p: np.ndarray, n_t: int, b: float) -> np.ndarray:
    """Theorem 4 (Bessel-corrected): ``p (1 - p) / (|D_T| - 1) + 2 b^2 / (|D_T| (|D_T| - 1))``.

    ``2 b^2`` is the variance of Laplace(b) (the theorem's text prints ``2 b``; Fig. 4 line 13 and
    the proof have ``2 b^2``).
    """
    p = np.asarray(p, dtype=float)
    return p * (1 - p) / (n_t - 1) + 2 * b**2 / (n_t * (n_t - 1))


@dataclass(frozen=True, eq=False)
class OptinEstimate:
    """The finalized head list (records in decreasing ``p``) and the opt-in estimates."""

    records: np.ndarray  #: population record indices, the M largest ``p`` (wildcard excluded)
    p: np.ndarray  #: ``p_O`` of those records
    variance: np.ndarray  #: ``sigma^2_O`` of those records
    p_star: float  #: ``p_O`` of ``<*, *>``, cut records folded in
    variance_star: float  #: Theorem 4's expression evaluated at ``p_star`` ([A17] admits it is not valid)
    n_t: int  #: ``|D_T|``


def estimate_optin(
    t_counts: np.ndarray,
    candidates: np.ndarray,
    epsilon: float,
    m_o: int,
    head_list_size: int,
    rng: np.random.Generator,
) -> OptinEstimate:
    """EstimateOptinProbabilities(eps, delta, T, m_O, HL_S, M) ([A17] Fig. 4).

    Every record of ``HL_S`` (``candidates``) and ``<*, *>`` (all other records of T) gets
    ``p_O = (N(r, D_T) + Y) / |D_T|`` with ``Y ~ Laplace(2 m_O / eps)``; the list is cut to the
    ``head_list_size`` records with largest ``p_O`` and the rest is folded into ``<*, *>``.
    """
    t_counts = np.asarray(t_counts, dtype=np.int64)
    candidates = np.asarray(candidates, dtype=np.int64)
    n_t = int(t_counts.sum())
    b = laplace_scale(epsilon, m_o)
    counts = t_counts[candidates]
    star = n_t - int(counts.sum())
    noise = rng.laplace(0.0, b, candidates.size + 1)
    p = (counts + noise[:-1]) / n_t
    p_star = (star + noise[-1]) / n_t
    order = np.argsort(-p, kind="stable")
    keep, cut = order[:head_list_size], order[head_list_size:]
    p_star = float(p_star + p[cut].sum())
    return OptinEstimate(
        records=candidates[keep],
        p=p[keep],
        variance=optin_variance(p[keep], n_t, b),
        p_star=p_star,
        variance_star=float(optin_variance(p_star, n_t, b)),
        n_t=n_t,
    )
