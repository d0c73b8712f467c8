"""The likelihood IBU maximizes, read from what an estimate declares it carries.

Two kinds, per budget group (an estimate's ``parts``, or the estimate itself):

- **full**: the group carries its report histogram ``h`` and channel ``Q(y | x)`` (finite-output
  oracles: GRR, HR, the identity of eps = inf users). The log-likelihood of the reports of users
  drawn i.i.d. from theta is ``sum_y h[y] log (Q theta)[y]`` (Agrawal & Aggarwal, PODS 2001;
  ElSalamouny & Palamidessi, EuroS&P 2020, §III).
- **per-item** (a composite likelihood, Lindsay 1988): the group carries support counts that its
  oracle declares ``bernoulli_support`` -- ``c_v`` is a sum over the n users of Bernoulli bits,
  P(bit v = 1 | user holds x) = ``p*`` if x = v else ``q*`` (OUE, SUE, OLH, BLH, SS, ...). For
  users drawn from theta each count is Binomial(n, r_v), ``r_v = q* + (p* - q*) theta_v``, and the
  product of these d marginal likelihoods is maximized::

      L_c(theta) = sum_v [ c_v log r_v + (n - c_v) log(1 - r_v) ].

  It is not the full likelihood of the reports: a user's d bits are dependent through her item,
  and the full likelihood needs each user's whole support set, which neither simulation path keeps
  (only the counts). Each term is a true log-likelihood, so the maximizer is consistent (Lindsay
  1988; Varin, Reid & Firth, Statistica Sinica 2011); it is not efficient in general.

The per-item likelihood is written as a channel, :class:`SupportBitsChannel`, so that one EM
iteration (``_em.run_em``) serves both kinds and any mix of groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ldpbench.errors import UsageError
from ldpbench.types import Channel, Estimate

from ._em import Group, channel_group, check_same_domain

#: The kinds of group, as the result rows name them, and how ``Estimate.info`` spells them out.
FULL = "full"
PER_ITEM = "per-item"
DESCRIPTIONS = {
    FULL: "full (report histogram through the oracle's channel)",
    PER_ITEM: "per-item composite (support counts as sums of Bernoulli(p*)/Bernoulli(q*) bits)",
}


class SupportBitsChannel(Channel):
    """The per-item likelihood of support counts as a channel over ``2d`` virtual reports.

    A virtual report is ``(v, b)``: item position ``v`` chosen uniformly, and the user's support
    bit ``b`` there. ``P((v, 1) | x) = (q + (p - q)[x = v]) / d`` and ``P((v, 0) | x) = (1 - q -
    (p - q)[x = v]) / d``, so each column sums to 1. With the histogram ``[c, n - c]`` (layout:
    the d ones, then the d zeros; mass ``n d``), the channel's log-likelihood is ``L_c`` of the
    module docstring minus the constant ``n d log d``: EM on it is IBU on the per-item likelihood.
    ``forward`` and ``backward`` are O(d).
    """

    def __init__(self, d: int, p: float, q: float):
        self.n_items = int(d)
        self.n_reports = 2 * int(d)
        self.p, self.q = float(p), float(q)

    def forward(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        total = theta.sum(axis=0)
        ones = self.q * total + (self.p - self.q) * theta
        return np.concatenate([ones, total - ones]) / self.n_items

    def backward(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        ones, zeros = w[: self.n_items], w[self.n_items :]
        flat = self.q * ones.sum(axis=0) + (1.0 - self.q) * zeros.sum(axis=0)
        return (flat + (self.p - self.q) * (ones - zeros)) / self.n_items


def support_bits_group(part: Estimate, method: str) -> Group:
    """The per-item likelihood group of an estimate whose support counts are Bernoulli sums.

    :raises UsageError: p* / q* that are not probabilities with p* > q*, or counts outside [0, n]
        (a vector post-processed through ``ldpbench.postprocess`` implies such counts when it is
        far from any frequency vector).
    """
    p, q, n = part.p_star, part.q_star, int(part.n)
    who = f"post-processor '{method}' on '{part.mechanism or 'this oracle'}' (epsilon={part.epsilon:g})"
    if p is None or q is None or not (0.0 <= q < p <= 1.0):
        raise UsageError(f"{who}: the per-item likelihood needs probabilities 0 <= q* < p* <= 1, got p*={p}, q*={q}")
    c = np.asarray(part.support_counts, dtype=float)
    if c.ndim != 1 or not np.all(np.isfinite(c)):
        raise UsageError(f"{who}: the support counts must be a finite vector")
    slack = 1e-9 * n  # the counts a vector implies (q* + (p* - q*) f) n carry rounding
    if n <= 0 or c.min() < -slack or c.max() > n + slack:
        raise UsageError(
            f"{who}: support counts must lie in [0, n={n}] (a sum of n bits), got [{c.min():g}, {c.max():g}]"
        )
    c = np.clip(c, 0.0, float(n))
    histogram = np.concatenate([c, n - c])
    return Group(histogram, SupportBitsChannel(c.size, p, q), n * c.size, float(part.epsilon))


def likelihood_groups(estimate: Estimate, method: str) -> tuple[list[Group], list[str]]:
    """The groups whose summed log-likelihood IBU maximizes, and the kind of each.

    Per part: the full likelihood when it carries a report histogram and a channel, else the
    per-item likelihood when it declares ``bernoulli_support``; a mix of kinds is a sum of
    log-likelihood terms (a composite likelihood again).

    :raises UsageError: a part carries neither (e.g. SHE, a protocol's estimate, a hand-built one).
    """
    groups, kinds = [], []
    for part in estimate.parts or (estimate,):
        if part.report_histogram is not None and part.channel is not None:
            groups.append(channel_group(part))
            kinds.append(FULL)
        elif part.bernoulli_support and part.support_counts is not None:
            groups.append(support_bits_group(part, method))
            kinds.append(PER_ITEM)
        else:
            raise UsageError(
                f"post-processor '{method}' needs a likelihood of what the oracle aggregated: a report "
                f"histogram with its channel (finite output: grr, hr) or support counts the oracle declares "
                f"bernoulli_support (oue, olh, ...); '{part.mechanism or 'this oracle'}' "
                f"(epsilon={part.epsilon:g}) provides neither"
            )
    check_same_domain(groups)
    return groups, kinds


def describe(kinds: Sequence[str]) -> tuple[str, str]:
    """``(short, long)`` names of the likelihood of these groups: one kind, or ``mixed``."""
    distinct = list(dict.fromkeys(kinds))
    if len(distinct) == 1:
        return distinct[0], DESCRIPTIONS[distinct[0]]
    return "mixed", "sum of " + "; ".join(DESCRIPTIONS[k] for k in distinct)
