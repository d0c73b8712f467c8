"""Cao, Jia & Gong's detection of fake users for OUE and OLH (docs/poisoning.md §Defenses).

Cao, Jia & Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX Security
2021 (arXiv 1911.02046), §"Countermeasures", *Detecting fake users*: under the maximal gain attack
(MGA) on OUE and OLH every fake report supports **all** the target items, so the target set is an
itemset that far more reports support than genuine users would; the server mines such frequent
itemsets from the per-user supports and discards the users whose support contains one. Genuine
users support a given set of ``k`` items with probability about ``q*^k``; fake ones with 1.

Our reading, vectorized (no loop over users; the domain is enumerated, as the oracles do):

1. the co-support counts ``C = S^T S`` of the ``N`` reports' ``(N, d)`` support matrix ``S``;
2. a pair ``(u, v)`` is *frequent* when ``C_uv`` exceeds its genuine expectation
   ``N pi_uv``, ``pi_uv = q*^2 + (f_u + f_v)(p* - q*) q*`` (a pure protocol with independent
   supports: OUE's bits, OLH with an ideal hash), by more than ``z sqrt(N pi_uv (1 - pi_uv))``,
   ``z = Phi^{-1}(1 - alpha / #pairs)`` (Bonferroni); ``f`` is the (poisoned) estimate from ``S``;
3. the mined itemset ``T`` is every item in a frequent pair (MGA's targets pairwise frequent);
4. a report is flagged fake when it supports at least ``k`` items of ``T``, ``k`` the smallest
   count at which ``N P(1 + Binomial(|T| - 1, q*) >= k) <= false_alarms`` (a genuine report
   supports its own item at most surely and each other item of ``T`` with probability ``q*``):
   at most ``false_alarms`` genuine reports are flagged in expectation.

``mining: pairs`` is steps 1-4; ``mining: greedy`` (the default, :func:`detect_greedy`) replaces
steps 2-4 by a greedy growth of itemsets tested against the genuine null, which keeps its power
with few fake users (the pair test's null uses the poisoned frequencies, which the fakes inflate).

Cost: the co-support counts are one ``(d, N) x (N, d)`` product, O(N d^2); the greedy paths
shrink their supporters geometrically, a few dozen steps of O(N + |supporters| d) each.

The estimate is then recomputed from the reports left. A defense on the per-user path only: it
needs every report's support, and never the fake-user labels.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags
from ldpbench_plugins.numerics.noise import significance_quantile


@dataclass(frozen=True)
class Detection:
    """What the detector found: ``flagged`` (one bool per report), the mined ``itemset``, the
    support threshold ``k`` (``0`` when nothing could be flagged)."""

    flagged: np.ndarray
    itemset: np.ndarray
    k: int


def frequent_pairs(support: np.ndarray, p: float, q: float, alpha: float) -> np.ndarray:
    """``(d, d)`` bool: the pairs co-supported beyond the genuine expectation (steps 1-2)."""
    s = np.asarray(support, dtype=np.float64)
    n_reports, d = s.shape
    co = s.T @ s
    f = np.clip((s.sum(axis=0) / n_reports - q) / (p - q), 0.0, 1.0)
    pi = np.clip(q * q + (f[:, None] + f[None, :]) * (p - q) * q, 1e-12, 1 - 1e-12)
    n_pairs = max(d * (d - 1) // 2, 1)
    z = significance_quantile(n_pairs, alpha)
    frequent = co > n_reports * pi + z * np.sqrt(n_reports * pi * (1 - pi))
    np.fill_diagonal(frequent, False)
    return frequent


def support_threshold(size: int, q: float, n_reports: int, false_alarms: float) -> int:
    """The smallest ``k <= size`` with ``n P(1 + Bin(size - 1, q) >= k) <= false_alarms``; 0 if none."""
    from scipy.stats import binom  # imported on first use: loading the plugins stays light

    for k in range(1, size + 1):
        # P(1 + B >= k) = P(B >= k - 1) = sf(k - 2)
        if n_reports * binom.sf(k - 2, size - 1, q) <= false_alarms:
            return k
    return 0


def detect_fake_users(
    support: np.ndarray, p: float, q: float, alpha: float = 0.01, false_alarms: float = 1.0
) -> Detection:
    """Cao et al.'s frequent-itemset detection (steps 1-4 above) on an ``(N, d)`` support matrix."""
    s = np.asarray(support, dtype=bool)
    frequent = frequent_pairs(s, p, q, alpha)
    itemset = np.flatnonzero(frequent.any(axis=1))
    k = support_threshold(itemset.size, q, s.shape[0], false_alarms) if itemset.size >= 2 else 0
    if k == 0:
        return Detection(np.zeros(s.shape[0], dtype=bool), itemset, 0)
    hits = s[:, itemset].sum(axis=1)
    return Detection(hits >= k, itemset, k)


def _log_tail(count: int, mean: float) -> float:
    """The Chernoff bound on ``log P(X >= count)``, ``X ~ Poisson(mean)``: ``count - mean -
    count log(count / mean)`` above the mean, 0 below (finite where the exact tail underflows)."""
    mean = max(mean, 1e-300)
    if count <= mean:
        return 0.0
    return count - mean - count * math.log(count / mean)


def _log_choose(d: int, k: int) -> float:
    return math.lgamma(d + 1) - math.lgamma(k + 1) - math.lgamma(d - k + 1)


def detect_greedy(support: np.ndarray, p: float, q: float, alpha: float = 0.01, starts: int = 10) -> Detection:
    """Greedy itemset growth (``mining: greedy``; a reading of ours, not the paper's procedure).

    From each of the ``starts`` pairs most co-supported beyond their genuine expectation (step 2's
    z-scores, unthresholded), add the item that the most reports supporting the current set also
    support, up to ``d`` items; along each path keep the set whose support count is least likely
    under the genuine null ``Poisson(N q*^(k-1) (q* + (p* - q*) f_S))`` (a genuine report
    supports all ``k`` items of ``S`` at most with that probability; ``f`` the poisoned estimate,
    which only raises the null), its tail bounded by Chernoff and corrected for every set of its
    size, ``C(d, k)``, and every size, ``d`` (Bonferroni: valid whatever chose the set). The most
    significant set is the mined itemset if its corrected tail is below ``alpha``; the reports
    supporting all of it are flagged. Finds the target set where the pair test lacks power.
    """
    s = np.asarray(support, dtype=bool)
    n_reports, d = s.shape
    sf = s.astype(np.float64)
    co = sf.T @ sf
    f = np.clip((sf.sum(axis=0) / n_reports - q) / (p - q), 0.0, 1.0)
    pi = np.clip(q * q + (f[:, None] + f[None, :]) * (p - q) * q, 1e-12, 1 - 1e-12)
    z = (co - n_reports * pi) / np.sqrt(n_reports * pi * (1 - pi))
    z[np.tril_indices(d)] = -np.inf
    order = np.argsort(z, axis=None)[::-1][: max(1, starts)]
    best_tail, best_set = 0.0, np.zeros(0, dtype=np.int64)
    for flat in order:
        u, v = divmod(int(flat), d)
        members = [u, v]
        rows = s[:, u] & s[:, v]
        while True:
            k = len(members)
            mean = n_reports * q ** (k - 1) * (q + (p - q) * float(f[members].sum()))
            tail = _log_tail(int(rows.sum()), mean) + _log_choose(d, k) + math.log(d)
            if tail < best_tail:
                best_tail, best_set = tail, np.array(sorted(members), dtype=np.int64)
            if k == d or not rows.any():
                break
            counts = s[rows].sum(axis=0)
            counts[members] = -1
            nxt = int(np.argmax(counts))
            members.append(nxt)
            rows = rows & s[:, nxt]
    if best_set.size < 2 or best_tail > math.log(alpha):
        return Detection(np.zeros(n_reports, dtype=bool), np.zeros(0, dtype=np.int64), 0)
    return Detection(s[:, best_set].all(axis=1), best_set, int(best_set.size))


def estimate_without(support: np.ndarray, flagged: np.ndarray, p: float, q: float) -> tuple[np.ndarray, int]:
    """The pure-protocol estimate ``(c_v / n' - q*) / (p* - q*)`` from the ``n'`` reports not flagged."""
    kept = np.asarray(support, dtype=bool)[~np.asarray(flagged, dtype=bool)]
    n_kept = int(kept.shape[0])
    if n_kept == 0:
        return np.full(kept.shape[1], math.nan), 0
    return (kept.sum(axis=0) / n_kept - q) / (p - q), n_kept


def _is_one_item_support(p: float, q: float, d: int) -> bool:
    # every report supports exactly one item (GRR): p* + (d - 1) q* = 1
    return abs(p + (d - 1) * q - 1.0) <= 1e-9


class DetectFakeUsers(PostProcessor):
    """Cao, Jia & Gong's fake-user detection for OUE/OLH (USENIX Security 2021, §"Countermeasures").

    Mines the itemset that too many reports support and flags the reports that support it
    (``flagged_reports``): ``mining: greedy`` (default) grows itemsets from the most co-supported
    pairs and keeps the one whose support is least likely for genuine reports (Poisson null,
    Chernoff bound, Bonferroni over every set of its size, level ``alpha``), flagging the reports
    that support all of it; ``mining: pairs`` takes every item of a pair co-supported beyond its
    genuine expectation (Bonferroni level ``alpha``) and flags the reports supporting at least
    ``k`` of them, ``k`` such that at most ``false_alarms`` genuine reports are flagged in
    expectation. Then re-estimates from the reports not flagged (``n`` stays the reports received;
    the kept number is in ``info``; docs/poisoning.md §Defenses). Per-user
    path only (``requires_reports``); sees the reports' supports, never which ones are fake.
    """

    name = "detect-fake-users"
    params = (
        Param("alpha", float, 0.01, "family-wise level of the frequent-pair test (Bonferroni)", min=1e-300, max=0.5),
        Param("false_alarms", float, 1.0, "genuine reports flagged, in expectation, at most (pairs)", min=1e-12),
        Param(
            "mining",
            str,
            "greedy",
            "pairs: frequent-pair test, then a support threshold; greedy: grow the most significant itemset",
            choices=("pairs", "greedy"),
        ),
    )

    def tags(self) -> PostProcessorTags:
        return dataclasses.replace(
            super().tags(), requires_pure=True, requires_reports=True, requires_itemset_reports=True
        )

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        p, q, support = estimate.p_star, estimate.q_star, estimate.report_supports
        if p is None or q is None:
            raise NotApplicable(f"{self.name} needs a pure oracle's p* and q*, and '{estimate.mechanism}' gave none")
        if support is None:
            raise NotApplicable(f"{self.name} needs each report's support: run it with 'simulation: per-user'")
        if _is_one_item_support(p, q, estimate.d):
            raise NotApplicable(f"{self.name}: every report of '{estimate.mechanism}' supports one item, no itemset")
        if self.mining == "greedy":
            det = detect_greedy(support, p, q, self.alpha)
        else:
            det = detect_fake_users(support, p, q, self.alpha, self.false_alarms)
        f, kept = estimate_without(support, det.flagged, p, q)
        if kept == 0:
            raise NotApplicable(f"{self.name} flagged every report")
        # n stays the number of reports received (a post-processor keeps the metadata); the
        # variance is the kept reports', and the support counts, which no longer go with n, go.
        variance = np.full(estimate.d, q * (1 - q) / (kept * (p - q) ** 2))
        diagnostics = {
            "flagged": int(det.flagged.sum()),
            "kept": kept,
            "itemset": int(det.itemset.size),
            "k": int(det.k),
        }
        return estimate.replace(
            frequencies=f,
            variance=variance,
            support_counts=None,
            report_histogram=None,
            channel=None,
            flagged_reports=det.flagged,
            info={**estimate.info, self.name: diagnostics},
        )


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(DetectFakeUsers)
