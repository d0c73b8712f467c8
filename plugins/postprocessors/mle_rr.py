"""``mle-rr``: the maximum-likelihood estimate of randomized response (GRR, k-RR) in closed form.

Pinzón, ElSalamouny, Massot, Miller, Arcolezi & Palamidessi, "Estimating the True Distribution of
Data Collected with Randomized Response", AAAI 2026 (arXiv:2601.08603): the MLE that IBU reaches
only in the limit, computed exactly in O(d log d). Derivation (the KKT conditions of the concave
program; van den Hout & van der Heijden, Int. Statist. Rev. 70(2), 2002, on boundary MLEs
under known misclassification):

GRR reports y w.p. ``P(y; theta) = q + (p - q) theta_y`` on the simplex, so with report counts
``c`` the log-likelihood is ``L = sum_y c_y log(q + (p - q) theta_y)``. Maximize on the simplex
with multiplier ``lambda (p - q)``: an item with ``theta_v > 0`` has ``c_v / (q + (p - q)
theta_v) = lambda``, an item with ``theta_v = 0`` has ``c_v / q <= lambda``. Hence, with ``A``
the items kept and ``k = |A|``,

    theta_v = (c_v / lambda - q) / (p - q)   (v in A),   lambda = C_A / (1 - (d - k) q),

``C_A = sum_{v in A} c_v`` (from ``sum theta = 1`` and ``p + (d - 1) q = 1``), and
``A = {v : c_v > q lambda}``. Sort the counts in decreasing order; ``g(k) = c_(k) (1 - (d - k) q)
- q C_k`` is non-increasing in k (``g(k + 1) = g(k) - (c_(k) - c_(k+1)) (1 - (d - k) q)``, and
``1 - (d - k) q >= p > 0``), so A is the top ``k* = #{k : g(k) > 0}`` counts: no search, one
sort and one cumulative sum. When A is every item, ``lambda = n`` and theta is the unbiased
estimate ``(c / n - q) / (p - q)``: the MLE is that estimate whenever it has no negative entry, and
otherwise removes the smallest counts and rescales the others' excess over ``q lambda``, a
projection onto the simplex in the likelihood's geometry (not the Euclidean Norm-Sub).

Needs one budget for all users and a randomized-response channel (``ChannelTags.
randomized_response``): ``ldpbench validate`` refuses other pairings; use ``ibu`` for the rest.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags


def rr_mle(counts: np.ndarray, p: float, q: float) -> tuple[np.ndarray, int]:
    """The MLE of randomized response from its report counts, and the number of items it keeps.

    :param counts: report counts ``c`` (length d, non-negative, not all zero; any real scale).
    :param p: P(report = held item); ``q``: P(report = each other item); ``p + (d - 1) q = 1``.
    """
    c = np.asarray(counts, dtype=float)
    d = c.size
    order = np.argsort(-c, kind="stable")
    top = c[order]
    keep_scale = 1.0 - (d - np.arange(1, d + 1)) * q  # 1 - (d - k) q, k = 1..d
    cumulative = np.cumsum(top)
    kept = int(np.count_nonzero(top * keep_scale > q * cumulative))  # g(k) > 0: a prefix of k
    lam = cumulative[kept - 1] / keep_scale[kept - 1]
    theta = np.zeros(d)
    # max(., 0): an item on the edge (g(k) = 0 up to rounding) gets 0, not -1e-17
    theta[order[:kept]] = np.maximum((top[:kept] / lam - q) / (p - q), 0.0)
    return theta / theta.sum(), kept


class MLERR(PostProcessor):
    """Closed-form MLE of GRR's frequencies (Pinzón et al., AAAI 2026); equals ``ibu`` at convergence."""

    name = "mle-rr"

    def tags(self) -> PostProcessorTags:
        return dataclasses.replace(super().tags(), requires_channel=True, requires_randomized_response=True)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        if len(estimate.parts) > 1:
            raise UsageError(
                f"post-processor '{self.name}' is the closed form for one budget; these users have "
                f"{len(estimate.parts)} budget groups: use 'ibu' (or 'em')"
            )
        channel, hist = estimate.channel, estimate.report_histogram
        pq = None if channel is None else channel.tags().randomized_response
        if hist is None or pq is None or channel.n_items != channel.n_reports:
            raise UsageError(
                f"post-processor '{self.name}' needs the report histogram of a randomized-response "
                f"channel (grr); '{estimate.mechanism or 'this oracle'}' provides none: use 'ibu'"
            )
        counts = np.asarray(hist, dtype=float)
        if (
            counts.shape != (channel.n_items,)
            or not np.all(np.isfinite(counts))
            or counts.min() < 0
            or counts.sum() <= 0
        ):
            raise UsageError(
                f"post-processor '{self.name}': the report histogram must be non-negative counts, not all zero"
            )
        theta, kept = rr_mle(counts, float(pq[0]), float(pq[1]))
        info = {**estimate.info, "mle_rr_support": kept}
        return estimate.replace(frequencies=theta, info=info)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(MLERR)
