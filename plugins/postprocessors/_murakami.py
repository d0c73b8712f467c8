"""Murakami, Hino & Sakuma's small-sample correction of EM ([MHS18] Algorithm 2), as transcribed.

[MHS18]: T. Murakami, H. Hino, J. Sakuma, "Toward distribution estimation under local
differential privacy with small samples", PoPETs 2018 (3):84-104, section 4.2. Equation numbers
below are the paper's, as the public reimplementation of the PETS 2025 SoK artifact
(``mad-lab-fau/sok-ldp-data-analysis``, ``murakami2018.py``) labels them.

Every report n carries the column ``g_n = Q(y_n | .)`` of its user's channel (a d-vector) and
``P_n = p . g_n``. With N reports:

- eq. 22: the score of one report, ``s_n = g_n / P_n``;
- eq. 31: ``S = (1/N) sum_n s_n s_n'`` (minus the mean Hessian of the log-likelihood);
- eq. 30: ``V_n = S - s_n s_n'``;
- eq. 29, 32: ``Q = -(S + ridge I)^{-1}`` (the reimplementation's Tikhonov term, 1e-10);
- eq. 56-57: ``t1 = (1/N) sum_n V_n Q s_n``;
- eq. 62: ``B = sum_n (Q s_n)(Q s_n)'``;
- eq. 63-64: ``u_n = g_n' B g_n``, ``t2 = (1/(2 N^2)) sum_n g_n u_n / P_n^3`` (eq. 58);
- eq. 28: ``a_hat = (1/N) Q (t1 - t2)``, the estimated error of EM (Rilstone et al. 1996's
  second-order bias with expectations replaced by empirical means).

Algorithm 2 then chooses the multiplier alpha of a_hat by simulation: draw N users from the EM
estimate p_hat, run each user's mechanism, rerun EM (p_hat') and eq. 28 (a_hat') on them, and keep
the alpha of a grid of powers of ten minimizing ``||p_hat' - alpha a_hat' - p_hat||^2``. The output
is the normalized decoder (section 3.2: clip at 0, renormalize) of ``p_hat - alpha a_hat``.

Vectorized over the distinct (channel, report) pairs, never over users: reports of one budget
group with the same value share g_n, so every sum over n is a weighted sum over at most
``min(N, G K)`` columns. The cost is O(d^2 M) with M those columns, and one d x d solve: the
method needs a d x d matrix (eq. 29), never an N x d or N x d x d array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ldpbench.errors import NotApplicable, UsageError

from ._em import Group

#: The reimplementation's Tikhonov term in eq. 29 (it notes 1e-20 is too small).
DEFAULT_RIDGE = 1e-10
#: The reimplementation's alpha grid, 10^-10 .. 10^9.
DEFAULT_ALPHA_EXPONENTS = (-10, 9)
#: d x d dense algebra: refuse domains where it would not fit in memory comfortably.
MAX_DOMAIN = 4096


@dataclass(frozen=True)
class ReportColumns:
    """The distinct report columns ``g`` (d x M) and how many reports share each (``w``, length M)."""

    g: np.ndarray
    w: np.ndarray

    @property
    def n(self) -> float:
        return float(self.w.sum())


def report_columns(groups: Sequence[Group]) -> ReportColumns:
    """The columns ``Q_g(y | .)`` of every observed (group, report value) pair, with their counts."""
    d = groups[0].channel.n_items
    if d > MAX_DOMAIN:
        raise NotApplicable(
            f"em-murakami builds d x d matrices (the paper's eq. 29); d = {d} is above {MAX_DOMAIN}: "
            "use em or em-rilstone for large domains"
        )
    cols, weights = [], []
    for g in groups:
        seen = np.flatnonzero(g.histogram > 0)
        if seen.size == 0:
            continue
        if g.grr_like:
            p, q = g.rr  # the channel's declared randomized_response tag
            block = np.full((d, seen.size), q)
            block[seen, np.arange(seen.size)] = p
        else:
            block = np.asarray(g.channel.dense(), dtype=float)[seen].T
        cols.append(block)
        weights.append(g.histogram[seen])
    return ReportColumns(np.concatenate(cols, axis=1), np.concatenate(weights).astype(float))


def estimated_error(theta: np.ndarray, reports: ReportColumns, ridge: float = DEFAULT_RIDGE) -> np.ndarray:
    """``a_hat`` of eq. 28 at the EM estimate ``theta`` (see the module docstring for the terms)."""
    G, w = reports.g, reports.w
    n = reports.n
    d = G.shape[0]
    P = theta @ G
    P = np.maximum(P, np.finfo(float).tiny)  # an observed report has P > 0 at the MLE; guard round-off
    s = G / P  # eq. 22, one column per distinct report
    S = (s * w) @ s.T / n  # eq. 31
    Q = -np.linalg.inv(S + ridge * np.eye(d))  # eq. 29, 32
    Qs = Q @ s
    # eq. 56-57: mean of (S - s s') Q s = S Q mean(s) - mean(s (s' Q s))
    quad = np.einsum("im,im->m", s, Qs)
    t1 = S @ (Q @ (s @ w)) / n - s @ (w * quad) / n
    B = (Qs * w) @ Qs.T  # eq. 62
    u = np.einsum("im,im->m", G, B @ G)  # eq. 64 (B symmetric)
    t2 = G @ (w * u / P**3) / (2.0 * n * n)  # eq. 63, 58
    return Q @ (t1 - t2) / n  # eq. 28


def alpha_grid(lo: int, hi: int) -> np.ndarray:
    """Powers of ten ``10^lo .. 10^hi`` (Algorithm 2's candidates)."""
    if hi < lo:
        raise UsageError(f"alpha grid: max exponent {hi} is below min exponent {lo}")
    return 10.0 ** np.arange(lo, hi + 1, dtype=float)


def choose_alpha(
    theta: np.ndarray, simulated: Sequence[tuple[np.ndarray, np.ndarray]], alphas: np.ndarray
) -> tuple[float, np.ndarray]:
    """Algorithm 2's choice: the alpha minimizing ``sum_r ||p_r - alpha a_r - theta||^2``.

    ``simulated`` holds ``(p_r, a_r)`` -- EM and eq. 28 on reports simulated from ``theta`` -- for
    every simulation r. Ties go to the smallest alpha. Returns ``(alpha, errors per alpha)``.
    """
    errors = np.zeros(alphas.size)
    for p_r, a_r in simulated:
        diff = (p_r - theta)[None, :] - alphas[:, None] * a_r[None, :]
        errors += np.einsum("ij,ij->i", diff, diff)
    return float(alphas[int(np.argmin(errors))]), errors


def normalized_decoder(v: np.ndarray) -> np.ndarray:
    """[MHS18] section 3.2: set negative entries to 0 and rescale to sum 1 (uniform if none is left)."""
    clipped = np.maximum(v, 0.0)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(v.size, 1.0 / v.size)
