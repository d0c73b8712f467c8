"""dBitFlipPM: d-bit flipping with permanent memoization (Ding, Kulkarni & Yekhanin, "Collecting
Telemetry Data Privately", NeurIPS 2017, §2 and §3; docs/longitudinal.md).

Every user samples ``bits`` distinct positions ``J_i`` of ``[d]`` once (uniformly, without
replacement) and, for the value x they hold, sends for each ``j`` in ``J_i`` a bit that is 1 with
probability ``p = e^(eps/2) / (e^(eps/2) + 1)`` if ``j = x`` and ``q = 1 / (e^(eps/2) + 1)``
otherwise. The bits are memoized per user and value: a user who keeps their value sends the same
report every round, and one who returns to a value resends its report (the paper's permanent
memoization, §3). One report is eps-LDP, and so is any number of reports of one value:
``eps_inf = eps_1 = eps``; a change of value draws new bits (eps again per distinct value).

The estimator of round t (the paper's §2, with ``k = d`` buckets: the paper's bucketing of a
larger domain into ``k`` buckets is not implemented, so the estimate is over ``[d]``):

    f_hat(v) = d / (n bits) * sum_{i : v in J_i} (b_iv - q) / (p - q),

unbiased (``P(v in J_i) = bits / d``), with variance ``(d / (n bits))^2 sum_i Var(S_iv)``,
``S_iv = [v in J_i] (b_iv - q)/(p - q)``: ``E S = (bits/d) [x_i = v]`` and
``E S^2 = (bits/d) (r (1 - r) + (r - q)^2) / (p - q)^2`` with ``r = p`` or ``q``
(:func:`dbitflip_variance`). Per-user path only: every user's positions and bits are drawn
(O(n d) for the positions, once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, Population, Protocol, ProtocolTags
from ldpbench.types.domain import FREQUENCIES
from ldpbench.types.rounds import ROUND_LABEL

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


class DBitFlipPM(Protocol):
    """dBitFlipPM (Ding, Kulkarni & Yekhanin, NeurIPS 2017): ``bits`` memoized flipped bits per user."""

    name = "dbitflip-pm"
    params = (Param("bits", int, 1, "positions each user samples and reports (the paper's d)", min=1, max=10**6),)

    def tags(self) -> ProtocolTags:
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("sequence",), aggregate=False)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Every report of one value is the same memoized one: ``eps_inf = eps_1 = epsilon``."""
        return lg.memo_accounting(epsilon, epsilon)

    def static_supports(
        self, d: int, epsilon: float, values: np.ndarray, T: int, rng: np.random.Generator  # noqa: N803
    ) -> np.ndarray:
        """``(users, d)``: the memoized report resent T times, so item j gets T supports when it is
        one of the user's sampled positions with a bit of 1 (for the averaging audit)."""
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
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "per-user"
    ) -> Mapping[str, Estimate]:
        rounds = population.rounds
        if rounds is None:
            raise NotApplicable("dbitflip-pm collects over rounds: it needs a sequence population")
        d, n = population.d, rounds.n
        if self.bits > d:
            raise NotApplicable(f"dbitflip-pm samples bits = {self.bits} positions of a domain of {d}")
        support = dbitflip_support(rounds.items, d, self.bits, epsilon, rng)
        variance = np.full(d, float(dbitflip_variance(n, d, self.bits, epsilon, 0.0)))
        info = {"eps_inf": float(epsilon), "eps_1": float(epsilon), "bits": self.bits}
        info.update(lg.declared_budgets(self.privacy_accounting(epsilon)))
        scale = d / (max(n, 1) * self.bits)
        return {
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


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(DBitFlipPM)
