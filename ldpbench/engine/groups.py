"""Personalized privacy budgets: users in groups, each group with its own epsilon ([MHS18]).

:func:`simulate_groups` draws ``sum(counts)`` users afresh from the population (without
replacement), splits them at random into the groups, runs each group through its own oracle, and
combines the groups' unbiased estimates into one unbiased estimate of the **population**
frequencies. The per-group estimates ride along in ``Estimate.parts`` (with their report
histograms and channels, what EM needs). The user sample can come from its own random stream
(``users_rng``): the engine keys it by (dataset, user mix, repeat), so the oracles compared in a
repeat see the same users and differ only in their perturbation.

A group with ``epsilon = inf`` sends its true values: its part is the exact histogram of its users,
with the identity channel (:class:`IdentityChannel`), whatever the oracle.

Combining the groups (inverse-variance weights, fixed in advance)
----------------------------------------------------------------
Group g's estimate ``f_g`` of the population frequency ``f_v`` is unbiased, with variance
(sampling of the group's users plus the oracle's noise; users treated as drawn with replacement,
which the population sizes here make exact to O(n_g / population))::

    Var[f_g,v] = r_v (1 - r_v) / (n_g (p_g - q_g)^2),   r_v = q_g + (p_g - q_g) f_v,

because each user's support indicator of ``v`` is a Bernoulli(r_v) variable for a user drawn at
random from the population (pure protocols, [W17]; for eps = inf, p = 1 and q = 0 and this is
f_v (1 - f_v) / n_g). The combination ``f = sum_g w_g f_g`` with ``sum_g w_g = 1`` is unbiased
only if the weights do not depend on the groups' estimates: weights computed from a group's own
noisy estimate correlate with its error (a group whose estimate of f_v came out low would get a
smaller variance, hence a larger weight, and the combination would be biased low). So the weights
are evaluated at the **fixed reference** ``f_v = 1/d`` (the uniform distribution): one weight per
group, the same for every item, known before any report is seen. The combination is then exactly
unbiased; it is the inverse-variance optimum when the truth is close to uniform and merely
suboptimal otherwise. ``tests/statistical/test_groups_unbiased.py`` checks the unbiasedness.

The combined estimate's ``variance`` (the V-approx noise variance, without the f_v term, as for a
single oracle) is ``sum_g w_g^2 q_g (1 - q_g) / (n_g (p_g - q_g)^2)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ldpbench.engine.simulate import simulate
from ldpbench.types import Channel, ChannelTags, Estimate, Oracle, Population

__all__ = ["IdentityChannel", "exact_estimate", "group_weights", "split_users", "simulate_groups"]


class IdentityChannel(Channel):
    """``P(y | x) = [x = y]``: the channel of users who send their true value (eps = inf).

    It is GRR's channel with ``p = 1`` and ``q = 0``, and declares that structure in its tags like
    GRR's, so that code specialised to it (EM) applies unchanged.
    """

    def __init__(self, d: int):
        self.n_items = self.n_reports = int(d)

    def tags(self) -> ChannelTags:
        return ChannelTags(randomized_response=(1.0, 0.0))

    def forward(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=float).copy()

    def backward(self, w: np.ndarray) -> np.ndarray:
        return np.asarray(w, dtype=float).copy()


def exact_estimate(counts: np.ndarray) -> Estimate:
    """The estimate of users who send their true value: their histogram, noise-free."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n <= 0:
        raise ValueError("cannot estimate from zero users")
    return Estimate(
        frequencies=counts / n,
        n=n,
        epsilon=math.inf,
        mechanism="exact",
        p_star=1.0,
        q_star=0.0,
        variance=np.zeros(counts.size),
        support_counts=counts.copy(),
        report_histogram=counts.copy(),
        channel=IdentityChannel(counts.size),
    )


def split_users(population: Population, counts: Sequence[int], rng: np.random.Generator) -> list[np.ndarray]:
    """Histograms of ``sum(counts)`` users drawn without replacement, split into groups at random.

    Successive multivariate hypergeometric draws: first the whole sample from the population, then
    group 0 from the sample, group 1 from what is left, and so on; each group is therefore a
    uniformly random subset of the sample, and the sample a uniformly random subset of the
    population.
    """
    sizes = [int(c) for c in counts]
    if any(c < 0 for c in sizes):
        raise ValueError(f"group sizes must be non-negative, got {sizes}")
    total = sum(sizes)
    if total <= 0:
        raise ValueError("the user groups hold no users")
    if total > population.n:
        raise ValueError(f"cannot draw {total} users from a population of {population.n}")
    remaining = rng.multivariate_hypergeometric(population.counts, total, method="marginals")
    out = []
    for i, size in enumerate(sizes):
        if i == len(sizes) - 1:
            part = remaining
        else:
            part = rng.multivariate_hypergeometric(remaining, size, method="marginals")
        remaining = remaining - part
        out.append(part.astype(np.int64))
    return out


def _reference_variance(e: Estimate, d: int) -> float:
    if e.p_star is not None and e.q_star is not None:
        return reference_variance(float(e.p_star), float(e.q_star), e.n, d)
    if e.variance is None:
        raise ValueError(
            f"the estimate of '{e.mechanism}' carries neither p*/q* nor a variance: its group cannot be weighted"
        )
    return float(np.mean(np.asarray(e.variance, dtype=float)))


def reference_variance(p: float, q: float, n: int, d: int) -> float:
    """Variance of a group's estimate of a population frequency at the reference ``f = 1/d``."""
    r = q + (p - q) / d
    return r * (1.0 - r) / (n * (p - q) ** 2)


def group_weights(parts: Sequence[Estimate], d: int) -> np.ndarray:
    """Inverse-variance weights of the groups, evaluated at the fixed reference ``f = 1/d``.

    A group whose estimate is not a pure protocol's (no p*/q*: SHE's summed reports) is weighted by
    its declared noise variance, which for such an oracle does not depend on f."""
    var = np.array([_reference_variance(e, d) for e in parts])
    if np.any(~np.isfinite(var)) or np.any(var <= 0):
        # d = 1 (nothing to estimate) or a degenerate oracle: weight groups by their sizes.
        w = np.array([float(e.n) for e in parts])
    else:
        w = 1.0 / var
    return w / w.sum()


def combine(parts: Sequence[Estimate], d: int) -> Estimate:
    """One unbiased estimate from the groups' estimates (weights of :func:`group_weights`)."""
    weights = group_weights(parts, d)
    freqs = sum(w * np.asarray(e.frequencies, dtype=float) for w, e in zip(weights, parts))
    noise = sum(
        w**2 * (np.zeros(d) if e.variance is None else np.asarray(e.variance, dtype=float))
        for w, e in zip(weights, parts)
    )
    finite = [e for e in parts if math.isfinite(e.epsilon)]
    mechanism = finite[0].mechanism if finite else parts[0].mechanism
    single = len(parts) == 1
    return Estimate(
        frequencies=np.asarray(freqs, dtype=float),
        n=int(sum(e.n for e in parts)),
        epsilon=parts[0].epsilon if single else math.nan,
        mechanism=mechanism,
        p_star=parts[0].p_star if single else None,
        q_star=parts[0].q_star if single else None,
        variance=np.asarray(noise, dtype=float),
        support_counts=parts[0].support_counts if single else None,
        report_histogram=parts[0].report_histogram if single else None,
        channel=parts[0].channel if single else None,
        bernoulli_support=parts[0].bernoulli_support if single else False,
        parts=tuple(parts),
        info={
            "groups": [{"epsilon": e.epsilon, "count": e.n, "weight": float(w)} for w, e in zip(weights, parts)],
            "combination": "inverse variance at the reference f = 1/d (data-independent weights)",
        },
    )


def simulate_groups(
    make_oracle: Callable[[float], Oracle],
    population: Population,
    groups: Sequence[tuple[float, int]],
    rng: np.random.Generator,
    simulation: str = "aggregate",
    *,
    users_rng: np.random.Generator | None = None,
) -> Estimate:
    """Simulate users with personalized budgets and return the combined estimate ([MHS18]).

    :param make_oracle: builds the oracle for a budget (not called for ``inf``).
    :param population: the users are drawn from it, afresh in every call.
    :param groups: ``(epsilon, count)`` pairs, epsilon already a float (``math.inf`` allowed).
        Groups of zero users are skipped.
    :param rng: drives every group's oracle (the perturbation), in group order; also the user
        sample when ``users_rng`` is not given.
    :param simulation: ``aggregate`` or ``per-user`` (see :func:`ldpbench.engine.simulate.simulate`).
    :param users_rng: draws the users and their split into groups (:func:`split_users`), and
        nothing else. The engine passes a stream keyed by (dataset, user mix, repeat) so that every
        oracle of a repeat sees the same users and only the perturbation differs (paired
        comparisons); ``None`` takes the users from ``rng`` first (one stream for a direct
        simulation, e.g. ``scripts/murakami2018_report.py``).
    :returns: the combined unbiased estimate; ``parts`` holds one estimate per non-empty group,
        in the given order.
    """
    groups = [(float(eps), int(count)) for eps, count in groups]
    for eps, _ in groups:
        if math.isnan(eps) or eps <= 0:
            raise ValueError(f"a group's epsilon must be positive, got {eps!r}")
    samples = split_users(population, [count for _, count in groups], rng if users_rng is None else users_rng)
    parts = []
    for (eps, count), users in zip(groups, samples):
        if count == 0:
            continue
        if math.isinf(eps):
            parts.append(exact_estimate(users))
        else:
            parts.append(simulate(make_oracle(eps), users, rng, simulation))
    return combine(parts, population.d)
