"""Padding-and-sampling: item frequencies when every user holds a set (docs/heavy-hitters.md).

The padding-and-sampling frequency oracle (PSFO) of Wang, Li & Jha, "Locally Differentially
Private Frequent Itemset Mining", IEEE S&P 2018, §IV (the idea of LDPMiner: Qin, Yang, Yu,
Khalil, Xiao & Ren, CCS 2016). A user holding the set ``S`` (items of ``[d]``) pads it to ``ell``
items with the distinct dummy items ``d, d + 1, ..., d + ell - 1`` (``ell - |S|`` of them; a set
longer than ``ell`` is not padded), samples one element of the padded set uniformly and reports it
with a frequency oracle over ``[d + ell)``. A real item v is then sampled by user i with
probability ``pi_iv = [v in S_i] / max(|S_i|, ell)``, and the server's estimate of the share of
users holding v is

    f_hat(v) = ell * (C_v - N q*) / (N (p* - q*)),

``C_v`` the reports supporting v. Its mean is ``ell * mean_i(pi_iv)``: exactly ``f(v)`` when every
set has at most ``ell`` items, and otherwise smaller by the truncation bias

    E f_hat(v) - f(v) = -(1/N) * sum_{i : v in S_i, |S_i| > ell} (1 - ell / |S_i|).

Its variance, the support indicators being independent Bernoulli(``r_iv = q* + (p* - q*) pi_iv``)
over users, is ``ell^2 * sum_i r_iv (1 - r_iv) / (N^2 (p* - q*)^2)`` (:func:`psfo_moments`).

The frequency oracle, as the paper chooses it: generalized randomized response over the
``d + ell`` values at the *amplified* budget ``eps' = ln(ell (e^eps - 1) + 1)`` — sampling picks
any one value (item or dummy: the dummies are distinct) with probability at most ``1 / ell``, so
``P(y | S) = q + (p - q) P(sample = y)`` lies between ``q`` and ``q + (p - q) / ell`` and the
ratio of two sets' probabilities is at most ``1 + (e^eps' - 1) / ell = e^eps``: eps-LDP — or OLH at
eps (no amplification: a user's items may all hash to one bucket), whichever has the smaller
variance: GRR when ``d < ell e^eps (4 ell - 1) + 1`` (the two variances compared; the reference
code's ``set_grr``). Both paths: per-user (every user's sample and report drawn) and aggregate
(every user's sample drawn, O(total set size), then the oracle's exact aggregate draw from the
histogram of samples: GRR's mixture shortcut, OLH's independent binomials under an ideal hash).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Domain, Estimate, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.domain import FREQUENCIES
from ldpbench_plugins.oracles.grr import GRR

from . import _candidates as olh


def as_sets(population: Population) -> tuple[np.ndarray, np.ndarray]:
    """The users' sets as a CSR pair ``(offsets, members)``: a set-valued population's own, or one
    singleton per user of a one-item population (histogram positions, users in item order)."""
    if population.offsets is not None and population.members is not None:
        return population.offsets, population.members
    n = population.n
    return np.arange(n + 1, dtype=np.int64), np.repeat(np.arange(population.d, dtype=np.int64), population.counts)


def take_users(offsets: np.ndarray, members: np.ndarray, users: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR pair of the given users (indices, in the order given)."""
    sizes = np.diff(offsets)[users]
    out = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    starts = np.repeat(offsets[users] - out[:-1], sizes)
    return out, members[starts + np.arange(out[-1])]


def restrict(offsets: np.ndarray, members: np.ndarray, lookup: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every set intersected with a candidate list: ``lookup[v]`` is v's candidate index or -1;
    members become candidate indices."""
    mapped = lookup[members]
    keep = mapped >= 0
    rows = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    sizes = np.bincount(rows[keep], minlength=offsets.size - 1)
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), mapped[keep]


def sample_padded(offsets: np.ndarray, members: np.ndarray, ell: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Each user's sample from their set padded to ``ell`` items: a member (a value of ``[d]``),
    or the dummy ``d + j``, ``0 <= j < ell`` (vectorized: one draw per user)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    u = rng.integers(0, np.maximum(sizes, ell))
    real = u < sizes
    padded = np.append(np.asarray(members, dtype=np.int64), 0)  # a safe index for empty sets
    picked = padded[np.where(real, offsets[:-1] + u, padded.size - 1)]
    return np.where(real, picked, d + u - sizes)


def amplified_epsilon(epsilon: float, ell: int) -> float:
    """``ln(ell (e^eps - 1) + 1)``: GRR's budget after sampling one of at least ``ell`` values."""
    return math.log(ell * math.expm1(epsilon) + 1)


def uses_grr(d: int, ell: int, epsilon: float) -> bool:
    """The paper's choice: GRR at the amplified budget has the smaller variance than OLH at eps,
    ``(d + ell - 2 + e^eps') / (e^eps' - 1)^2 < 4 e^eps / (e^eps - 1)^2``, i.e.
    ``d < ell e^eps (4 ell - 1) + 1``."""
    return d < ell * math.exp(epsilon) * (4 * ell - 1) + 1


def oracle_probabilities(oracle: str, d: int, ell: int, epsilon: float) -> tuple[float, float]:
    """``(p*, q*)`` of the report of a sampled value: GRR over ``d + ell`` values at the amplified
    budget, or OLH at ``epsilon``."""
    if oracle == "grr":
        e = math.exp(amplified_epsilon(epsilon, ell))
        return e / (e + d + ell - 1), 1.0 / (e + d + ell - 1)
    return olh.olh_probabilities(epsilon)


def support_counts(
    sampled: np.ndarray, oracle: str, d: int, ell: int, epsilon: float, rng: np.random.Generator, simulation: str
) -> np.ndarray:
    """``C_v`` for the real items ``0 .. d-1`` from the users' sampled values (``[d + ell)``)."""
    if oracle == "grr":
        grr = GRR(d + ell, amplified_epsilon(epsilon, ell))
        if simulation == "per-user":
            return grr.support_counts(grr.perturb(sampled, rng))[:d]
        return grr.sample_support_counts(np.bincount(sampled, minlength=d + ell), rng)[:d]
    if simulation == "per-user":
        seeds, reports = olh.perturb(sampled.astype(np.uint64), epsilon, rng)
        return olh.support_counts(seeds, reports, np.arange(d, dtype=np.uint64), epsilon)
    holders = np.bincount(sampled, minlength=d + ell)[:d]
    return olh.sample_support_counts(holders, sampled.size, epsilon, rng)


def psfo_estimate(support: np.ndarray, users: int, ell: int, p: float, q: float) -> np.ndarray:
    """``ell (C_v - N q*) / (N (p* - q*))``: the share of users holding each item."""
    return ell * (np.asarray(support, dtype=float) - users * q) / (max(users, 1) * (p - q))


def psfo_moments(population: Population, ell: int, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact mean and variance of :func:`psfo_estimate` per item on a set-valued population
    (see the module docstring): ``ell * mean_i pi_iv`` and ``ell^2 sum_i r_iv (1 - r_iv) / (N (p*-q*))^2``."""
    assert population.offsets is not None and population.members is not None
    n, d = population.n, population.d
    sizes = population.set_sizes
    rows = np.repeat(np.arange(n), sizes)
    pi = 1.0 / np.maximum(sizes, ell)[rows]  # pi_iv for each (user, member) pair
    mean = ell * np.bincount(population.members, weights=pi, minlength=d) / n
    r_hold = q + (p - q) * pi
    holders = population.counts
    var_sum = np.bincount(population.members, weights=r_hold * (1 - r_hold), minlength=d) + (n - holders) * q * (1 - q)
    return mean, ell**2 * var_sum / (n * (p - q)) ** 2


def truncation_bias(population: Population, ell: int) -> np.ndarray:
    """``-(1/N) sum_{i: v in S_i, |S_i| > ell} (1 - ell/|S_i|)`` per item: the padded estimator's bias."""
    sizes = population.set_sizes
    per_member = np.repeat(np.minimum(0.0, ell / np.maximum(sizes, 1) - 1.0), sizes)
    return np.bincount(population.members, weights=per_member, minlength=population.d) / population.n


class PaddingSampling(Protocol):
    """PSFO: pad to ``ell``, sample one, report it (Wang, Li & Jha, S&P 2018, §IV; LDPMiner's
    padding-and-sampling, Qin et al., CCS 2016). Returns the item frequencies (``frequencies``)."""

    name = "padding-sampling"
    params = (
        Param("ell", int, 4, "the padding length: each set padded (with dummies) to ell items", min=1, max=10**4),
        Param(
            "oracle",
            str,
            "auto",
            "the frequency oracle of the sampled item: grr (amplified budget), olh, or auto (the paper's choice)",
            choices=("auto", "grr", "olh"),
        ),
    )

    def tags(self) -> ProtocolTags:
        # Lists every item of [d] (and ell dummies): an enumerable domain only. Users hold sets
        # (one item per user is the set of that item).
        return ProtocolTags(result=FREQUENCIES, enumerates_domain=True, records=("set", "item"))

    def chosen_oracle(self, d: int, epsilon: float) -> str:
        """``grr`` or ``olh``: the parameter, or the paper's variance rule (:func:`uses_grr`)."""
        if self.oracle != "auto":
            return self.oracle
        return "grr" if uses_grr(d, self.ell, epsilon) else "olh"

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """One report per user, eps-LDP (GRR's amplified budget included: module docstring)."""
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [float(epsilon)]}]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """GRR at the amplified budget or OLH at eps, as :meth:`chosen_oracle` picks for the domain."""
        d = domain.size if domain.is_enumerable else 2**31
        if self.chosen_oracle(d, epsilon) == "grr":
            # GRR runs at the amplified budget eps' > eps; only sampling first makes the report
            # eps-LDP, which an item oracle's audit cannot see: the exact check of the composed
            # law is tests/unit/plugins/protocols/test_padding_sampling.py.
            return []
        return [("round 0", olh.RoundOLH, float(epsilon))]

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        offsets, members = as_sets(population)
        n, d, ell = population.n, population.d, self.ell
        oracle = self.chosen_oracle(d, epsilon)
        p, q = oracle_probabilities(oracle, d, ell, epsilon)
        sampled = sample_padded(offsets, members, ell, d, rng)
        started = time.perf_counter()
        support = support_counts(sampled, oracle, d, ell, epsilon, rng, simulation)
        freq = psfo_estimate(support, n, ell, p, q)
        variance = np.full(d, ell**2 * q * (1 - q) / (max(n, 1) * (p - q) ** 2))
        server = time.perf_counter() - started
        est = Estimate(
            frequencies=freq,
            n=n,
            epsilon=float(epsilon),
            mechanism=self.name,
            variance=variance,
            info={"oracle": oracle, "ell": ell, "server_seconds": server},
        )
        return {"frequencies": est}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(PaddingSampling)
