"""dBitFlipPM: d-bit flipping with permanent memoization (Ding, Kulkarni & Yekhanin, "Collecting
Telemetry Data Privately", NeurIPS 2017, §2 and §3; docs/longitudinal.md).

Every user samples ``bits`` distinct positions ``J_i`` of ``[d]`` once (uniformly, without
replacement) and, for the value x they hold, sends for each ``j`` in ``J_i`` a bit that is 1 with
probability ``p = e^(eps/2) / (e^(eps/2) + 1)`` if ``j = x`` and ``q = 1 / (e^(eps/2) + 1)``
otherwise. The bits are memoized per user and value: a user who keeps their value sends the same
report every round, and one who returns to a value resends its report (the paper's permanent
memoization, §3). One report is eps-LDP, and so is any number of reports of one value:
``eps_inf = eps_1 = eps``; a change of value draws new bits (eps again per distinct value).

**Bucketing** (the paper's §2: a value of a large domain is first mapped to one of ``k`` buckets,
and the protocol runs over the buckets): ``buckets: k`` maps item x of ``[d]`` to bucket
``floor(x k / d)`` (contiguous, ``ldpbench.types.data.bucket_of``), each user samples ``bits`` of
the ``k`` bucket positions, and every output is a ``frequencies`` estimate over the ``k`` buckets
(``info["buckets"] = k``), which the engine scores against the bucketed truth (rows' ``d`` is k;
``Population.bucketed``). ``buckets: 0`` (default) is ``k = d``, no bucketing. Below, ``d`` reads
``k`` when bucketed.

The estimator of round t (the paper's §2, the paper's ``d`` is ``bits``, its ``k`` our ``d``):

    f_hat(v) = d / (n bits) * sum_{i : v in J_i} (b_iv - q) / (p - q),

unbiased (``P(v in J_i) = bits / d``), with variance ``(d / (n bits))^2 sum_i Var(S_iv)``,
``S_iv = [v in J_i] (b_iv - q)/(p - q)``: ``E S = (bits/d) [x_i = v]`` and
``E S^2 = (bits/d) (r (1 - r) + (r - q)^2) / (p - q)^2`` with ``r = p`` or ``q``
(:func:`dbitflip_variance`). Both paths: every user's positions and bits drawn (O(n d) for the
positions, once), or the exact aggregate draw (:func:`dbitflip_aggregate_support`).

The ``rounds-mean`` output is the mean of the T rounds' estimates, scored against every round's
users together; its ``variance`` is one round's at f = 0, exact for users who keep their value (they
resend the same report, so averaging rounds removes none of its noise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, Population, Protocol, ProtocolTags
from ldpbench.types.data import bucket_of
from ldpbench.types.domain import FREQUENCIES
from ldpbench.types.rounds import MEAN_LABEL, ROUND_LABEL

from . import _longitudinal as lg


def dbitflip_variance(n: int, d: int, bits: int, epsilon: float, f: np.ndarray | float) -> np.ndarray:
    """The exact variance of one round's ``f_hat`` at true frequencies ``f`` (module docstring)."""
    p, q = lg.sue_layer(epsilon)
    f = np.asarray(f, dtype=float)
    share = bits / d
    second_holder = share * (p * (1 - p) + (p - q) ** 2) / (p - q) ** 2
    second_other = share * q * (1 - q) / (p - q) ** 2
    var_holder = second_holder - share**2
    return (d / (n * bits)) ** 2 * n * (f * var_holder + (1 - f) * second_other)


def dbitflip_support(items: np.ndarray, d: int, bits: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """``(T, d)`` sums over users of ``[v in J_i] (b_iv - q)/(p - q)``: positions per user, bits per
    (user, value) pair, both drawn once; every round resends them."""
    p, q = lg.sue_layer(epsilon)
    T, n = items.shape  # noqa: N806
    uniq, inverse = np.unique(np.arange(n, dtype=np.int64)[None, :] * d + items, return_inverse=True)
    values, owner, inverse = uniq % d, uniq // d, inverse.reshape(T, n)  # each (user, value) pair
    positions = np.argpartition(rng.random((n, d)), bits - 1, axis=1)[:, :bits]  # J_i, uniform
    sampled = positions[owner]  # (P, bits)
    bit = rng.random(sampled.shape) < np.where(sampled == values[:, None], p, q)
    score = (bit - q) / (p - q)
    out = np.empty((T, d))
    for t in range(T):
        pairs = inverse[t]
        out[t] = np.bincount(sampled[pairs].ravel(), weights=score[pairs].ravel(), minlength=d)
    return out


def _subset_counts(
    groups: np.ndarray, start: np.ndarray, excluded: np.ndarray, d: int, slots: int, rng: np.random.Generator
) -> np.ndarray:
    """``(G, d)``: for each group g of pairs, how many of its pairs' position sets contain each
    position, every pair of the group choosing its remaining positions uniformly without
    replacement from ``[d]`` minus ``excluded[g]``; ``start[g, r]`` pairs have ``r`` positions
    left to choose (``r = 0 .. slots``). Exact: the positions are visited in order, and a pair
    with ``r`` left among ``R`` unvisited ones takes the next with probability ``r / R`` (a
    uniform subset's sequential law), drawn as one binomial per (group, r): one vectorized draw
    per position, O(d * G * slots) in all, whatever the number of pairs."""
    G = groups.size  # noqa: N806
    state = start.astype(np.int64).copy()
    out = np.zeros((G, d), dtype=np.int64)
    left = np.arange(slots + 1, dtype=float)
    for r in range(d - 1):  # the (d - 1) positions other than the group's own, in order
        remaining = d - 1 - r
        take = rng.binomial(state[:, 1:], np.minimum(left[1:] / remaining, 1.0))  # (G, slots)
        state[:, 1:] -= take
        state[:, :-1] += take
        pos = r + (r >= excluded)
        out[np.arange(G), pos] = take.sum(axis=1)
    return out


def dbitflip_aggregate_support(
    items: np.ndarray, d: int, bits: int, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """The ``(T, d)`` sums of :func:`dbitflip_support`, drawn exactly without a per-user loop.

    Every report is memoized per (user, value) pair, so round t's sum is that of the pairs held in
    t: grouped by activity pattern (``_longitudinal``'s T-bit masks), a pattern's pairs holding x
    give, at position x, ``A ~ Binomial(h, bits/d)`` pairs that sampled it (``P(x in J) = bits/d``)
    and, at the other positions, the counts of ``A`` pairs choosing ``bits - 1`` more and ``h - A``
    choosing ``bits`` positions of ``[d] \\ {x}`` uniformly (:func:`_subset_counts`). Given those
    counts the bits are independent: ``Binomial(N_hold, p) + Binomial(N_other, q)`` ones per
    position and pattern. Equal in law to the per-user path (positions independent of the
    value, bits independent given positions); cost O(patterns * d^2 * bits) after counting the
    pairs, independent of n."""
    T, n = items.shape  # noqa: N806
    if T > lg.MAX_AGGREGATE_ROUNDS:
        return dbitflip_support(items, d, bits, epsilon, rng)
    p, q = lg.sue_layer(epsilon)
    patterns, hist = lg.pattern_histogram(items, d)  # (P,), (P, d) pairs of each pattern holding each value
    pat, val = np.nonzero(hist)
    h = hist[pat, val]
    hold = rng.binomial(h, bits / d)  # pairs holding x whose J contains x
    start = np.zeros((pat.size, bits + 1), dtype=np.int64)
    start[:, bits] = h - hold
    start[:, bits - 1] += hold
    other = _subset_counts(pat, start, val, d, bits, rng)  # (G, d), 0 at each group's own value
    n_hold = np.zeros(hist.shape, dtype=np.int64)
    n_hold[pat, val] = hold
    n_other = np.zeros(hist.shape, dtype=np.int64)
    np.add.at(n_other, pat, other)
    ones = rng.binomial(n_hold, p) + rng.binomial(n_other, q)
    score = (ones - q * (n_hold + n_other)) / (p - q)  # (P, d)
    active = ((patterns[None, :] >> np.arange(T, dtype=np.int64)[:, None]) & 1).astype(float)
    return active @ score


class DBitFlipPM(Protocol):
    """dBitFlipPM (Ding, Kulkarni & Yekhanin, NeurIPS 2017): ``bits`` memoized flipped bits per user."""

    name = "dbitflip-pm"
    params = (
        Param("bits", int, 1, "positions each user samples and reports (the paper's d)", min=1, max=10**6),
        Param(
            "buckets",
            int,
            0,
            "contiguous buckets of [d] the protocol runs over (the paper's k; 0: k = d, no bucketing)",
            min=0,
            max=10**7,
        ),
    )

    def tags(self) -> ProtocolTags:
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("sequence",))

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Every report of one value is the same memoized one: ``eps_inf = eps_1 = epsilon``."""
        return lg.memo_accounting(epsilon, epsilon)

    def static_supports(
        self,
        d: int,
        epsilon: float,
        values: np.ndarray,
        T: int,
        rng: np.random.Generator,  # noqa: N803
    ) -> np.ndarray:
        """``(users, d)``: the memoized report resent T times, so item j gets T supports when it is
        one of the user's sampled positions with a bit of 1 (for the averaging audit)."""
        if self.buckets and self.buckets < d:
            raise NotApplicable("the averaging audit runs dbitflip-pm without bucketing (buckets: 0)")
        if self.bits > d:
            raise NotApplicable(f"dbitflip-pm samples bits = {self.bits} positions of a domain of {d}")
        p, q = lg.sue_layer(epsilon)
        values = np.asarray(values, dtype=np.int64)
        m = values.size
        positions = np.argpartition(rng.random((m, d)), self.bits - 1, axis=1)[:, : self.bits]
        bit = rng.random(positions.shape) < np.where(positions == values[:, None], p, q)
        out = np.zeros((m, d), dtype=np.int64)
        np.put_along_axis(out, positions, bit * T, axis=1)
        return out

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        rounds = population.rounds
        if rounds is None:
            raise NotApplicable("dbitflip-pm collects over rounds: it needs a sequence population")
        d, n, items = population.d, rounds.n, rounds.items
        info: dict[str, Any] = {"eps_inf": float(epsilon), "eps_1": float(epsilon), "bits": self.bits}
        if self.buckets > d:
            raise NotApplicable(f"dbitflip-pm: buckets = {self.buckets} exceeds the domain size {d}")
        if self.buckets and self.buckets < d:  # run over k buckets; scored against the bucketed truth
            items, d = bucket_of(d, self.buckets)[items], self.buckets
            info["buckets"] = d
        if self.bits > d:
            raise NotApplicable(f"dbitflip-pm samples bits = {self.bits} positions of a domain of {d}")
        draw = dbitflip_support if simulation == "per-user" else dbitflip_aggregate_support
        support = draw(items, d, self.bits, epsilon, rng)
        variance = np.full(d, float(dbitflip_variance(n, d, self.bits, epsilon, 0.0)))
        info.update(lg.declared_budgets(self.privacy_accounting(epsilon)))
        scale = d / (max(n, 1) * self.bits)
        out = {
            ROUND_LABEL.format(t=t + 1): Estimate(
                frequencies=scale * support[t],
                n=n,
                epsilon=float(epsilon),
                mechanism=self.name,
                variance=variance,
                info=info,
            )
            for t in range(rounds.T)
        }
        # Averaged over rounds: a user who keeps their value resends one report, so its variance
        # at f = 0 is one round's (module docstring).
        out[MEAN_LABEL] = Estimate(
            frequencies=scale * support.mean(axis=0),
            n=n,
            epsilon=float(epsilon),
            mechanism=self.name,
            variance=variance,
            info={**info, "rounds": rounds.T},
        )
        return out


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(DBitFlipPM)
