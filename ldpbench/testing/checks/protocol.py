"""The protocol checks, for heavy-hitter protocols (a result of kind ``identified-items``, and the
first two for itemset protocols, ``identified-itemsets``; docs/heavy-hitters.md): the frequency
oracle of every round is epsilon-LDP on what it sends (the exact audit of its output table and the
empirical audit of its reports), the declared accounting adds up to the budget across the rounds a
run really has, and the protocol identifies a planted set of heavy hitters. A longitudinal protocol
(records ``sequence``) gets the checks of :mod:`.longitudinal` instead: accounting over rounds,
per-round unbiasedness, the averaging audit; a multidimensional protocol (records: tuple) the
checks of :mod:`ldpbench.testing.checks.multidim`: its per-attribute accounting, per-attribute
unbiasedness and the audit of the whole record's report.

The planted population: ``planted`` items each held by ``share`` of ``n`` users, the other users
spread one-ish each over ``tail`` further items; items are random ``bits``-wide strings, or
positions in ``[2^bits]`` for a protocol that enumerates its domain. With the defaults (4 items at
8%, n = 10^5, eps = 4) PEM and the thresholded oracle find the set in every repeat we ran; the check
asks for ``min_found`` of ``repeats``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.testing.checks import longitudinal, multidim
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _rng
from ldpbench.types import Domain, IdentifiedItems, Population, Protocol
from ldpbench.types.domain import IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS


@dataclass(frozen=True)
class ProtocolCheckConfig(longitudinal.LongitudinalCheckConfig):
    """Budgets, sizes and seeds of the protocol checks (the longitudinal ones' too)."""

    seed: int = 0
    epsilon: float = 4.0
    bits: int = 32
    n: int = 100_000
    planted: int = 4
    share: float = 0.08
    tail: int = 2_000
    repeats: int = 5
    min_found: int = 4
    #: reports per input of the empirical audit of each round's oracle, and its family-wise level
    audit_trials: int = 20_000
    audit_alpha: float = 0.05
    #: audit domains of each round's oracle (small: the exact table enumerates the hash family)
    audit_domains: tuple[int, ...] = (4, 8)
    #: multidimensional protocols (:mod:`.multidim`): the budget, the population (attribute
    #: domains, users), the runs per simulation path and the z bound of the unbiasedness test
    #: (family-wise: 10 items x 2 paths at z = 4.5 fail a correct protocol w.p. about 1e-4), the
    #: shapes of the whole-record audit, and reports per audited record with their level
    multidim_epsilon: float = 1.0
    multidim_sizes: tuple[int, ...] = (3, 5)
    multidim_n: int = 2_000
    multidim_repeats: int = 60
    multidim_z: float = 4.5
    multidim_audit_sizes: tuple[tuple[int, ...], ...] = ((2, 2), (2, 2, 2))
    multidim_trials: int = 20_000
    multidim_alpha: float = 1e-4


def _build(subject: Subject) -> Protocol:
    """The heavy-hitter protocol under test (a protocol of another result kind: not applicable)."""
    protocol = subject.build()
    assert isinstance(protocol, Protocol), f"{subject.label}: building it gave {type(protocol).__name__}"
    if protocol.tags().result not in (IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS):
        raise CheckSkipped(f"the checks concern heavy-hitter protocols; its result is {protocol.tags().result}")
    return protocol


def _domain(protocol: Protocol, cfg: ProtocolCheckConfig) -> Domain:
    """Bit strings, or ``[2^bits]`` for a protocol that enumerates (capped at 2^12 items: the
    planted items then stand out under randomized response over the whole domain too)."""
    if protocol.tags().enumerates_domain:
        return Domain.enumerable(1 << min(cfg.bits, 12))
    return Domain.bit_strings(cfg.bits)


def planted_population(domain: Domain, cfg: ProtocolCheckConfig, rng: np.random.Generator) -> tuple[Population, set]:
    """The planted population on ``domain`` and its planted items (see the module docstring)."""
    m = cfg.planted + cfg.tail
    size = domain.cardinality
    if m > size:
        raise ValueError(f"{m} items do not fit {domain.describe()}")
    items = np.unique(rng.integers(0, size - 1, size=4 * m, dtype=np.uint64, endpoint=True))
    items = rng.permutation(items)[:m]
    counts = np.zeros(m, dtype=np.int64)
    counts[: cfg.planted] = round(cfg.share * cfg.n)
    rest = cfg.n - int(counts.sum())
    counts[cfg.planted :] = rest // cfg.tail
    counts[cfg.planted : cfg.planted + rest % cfg.tail] += 1
    planted = set(items[: cfg.planted].tolist())
    if domain.is_enumerable:
        dense = np.zeros(size, dtype=np.int64)
        dense[items.astype(np.int64)] = counts
        return Population(dense, name="planted", domain=domain), planted
    order = np.argsort(items)
    return Population(counts[order], name="planted", domain=domain, values=items[order]), planted


def _run(protocol: Protocol, population: Population, epsilon: float, rng: np.random.Generator) -> IdentifiedItems:
    simulation = "aggregate" if protocol.tags().aggregate else "per-user"
    outputs = protocol.run(population, epsilon, rng, simulation=simulation)
    results = [r for r in outputs.values() if isinstance(r, IdentifiedItems)]
    assert results, "the protocol returned no IdentifiedItems although its tags say identified-items"
    return results[0]


def check_protocol_round_oracles_ldp(subject: Subject, cfg: ProtocolCheckConfig) -> None:
    """The frequency oracle of every round, as the protocol declares it (``round_oracles``), passes
    the exact audit of its output table and the empirical audit of its reports at its budget."""
    from ldpbench.audit import empirical_audit, exact_audit

    protocol = _build(subject)
    declared = protocol.round_oracles(cfg.epsilon, _domain(protocol, cfg))
    if not declared:
        raise CheckSkipped("the protocol declares no round oracle (round_oracles): nothing to audit")
    for label, cls, epsilon in declared:
        assert 0 < epsilon <= cfg.epsilon * (1 + 1e-12), f"{subject.label}: {label} runs at {epsilon}, over the budget"
        exact = exact_audit(cls, [epsilon], domains=cfg.audit_domains, samples=0, seed=cfg.seed)
        assert exact.passed, f"{subject.label}: {label}: exact audit {exact.summary()}"
        audit = empirical_audit(
            lambda eps, cls=cls: cls(d=cfg.audit_domains[-1], epsilon=eps),
            [epsilon],
            trials=cfg.audit_trials,
            alpha=cfg.audit_alpha,
            seed=cfg.seed,
        )
        assert audit.available and not audit.leak, (
            f"{subject.label}: {label}: empirical audit says {audit.verdict} "
            f"(lower bound {max(b.eps_lb for b in audit.budgets):.3f} > epsilon {epsilon:g})"
        )


def check_protocol_accounting(subject: Subject, cfg: ProtocolCheckConfig) -> None:
    """Every group's declared budget is at most epsilon, its ``per_round`` budgets add up to it,
    one per round the run really has, and each round's reports run at the budget declared for it."""
    protocol = _build(subject)
    domain = _domain(protocol, cfg)
    groups = protocol.round_accounting(cfg.epsilon, domain)
    assert groups, f"{subject.label}: round_accounting declared no group"
    population, _ = planted_population(domain, cfg, _rng(cfg, "accounting"))
    result = _run(protocol, population, cfg.epsilon, _rng(cfg, "accounting-run"))
    for group in groups:
        eps = float(group["epsilon"])
        assert eps <= cfg.epsilon * (1 + 1e-12), (
            f"{subject.label}: group {group.get('group')!r} spends {eps} > {cfg.epsilon}"
        )
        per_round = group.get("per_round")
        if per_round is None:
            continue
        assert all(e >= 0 for e in per_round), f"{subject.label}: a negative per-round budget in {group}"
        assert math.isclose(sum(per_round), eps, rel_tol=1e-9), (
            f"{subject.label}: group {group.get('group')!r}: per_round adds up to {sum(per_round)}, not {eps}"
        )
        if result.rounds:
            assert len(per_round) == len(result.rounds), (
                f"{subject.label}: {len(per_round)} rounds declared, the run had {len(result.rounds)}"
            )
    for j, spent in enumerate(result.rounds):
        if "epsilon" in spent and all(g.get("per_round") is not None for g in groups):
            declared = max(g["per_round"][j] for g in groups)
            assert math.isclose(float(spent["epsilon"]), declared, rel_tol=1e-9), (
                f"{subject.label}: round {j} ran at {spent['epsilon']}, the accounting declares {declared}"
            )


def check_protocol_identifies_planted(subject: Subject, cfg: ProtocolCheckConfig) -> None:
    """On the planted population at ``epsilon``, the protocol's identified items hold every planted
    item (or, asked for fewer, only planted ones) in at least ``min_found`` of ``repeats`` runs."""
    protocol = _build(subject)
    domain = _domain(protocol, cfg)
    population, planted = planted_population(domain, cfg, _rng(cfg, "planted"))
    found = 0
    for r in range(cfg.repeats):
        result = _run(protocol, population, cfg.epsilon, _rng(cfg, "identify", r))
        items = set(np.asarray(result.items).tolist())
        want = planted if result.k >= len(planted) else None
        found += planted <= items if want is not None else (len(items) == result.k and items <= planted)
    assert found >= cfg.min_found, (
        f"{subject.label}: found the {len(planted)} planted items in {found} of {cfg.repeats} runs "
        f"(n = {cfg.n:,}, each at {cfg.share:.0%}, epsilon = {cfg.epsilon:g}, {domain.describe()}); "
        f"at least {cfg.min_found} expected"
    )


#: The heavy-hitter checks.
HEAVY_HITTER_CHECKS: tuple[Callable[[Subject, Any], None], ...] = (
    check_protocol_round_oracles_ldp,
    check_protocol_accounting,
    check_protocol_identifies_planted,
    *longitudinal.CHECKS,
)
#: The protocol checks, in the order they run: heavy hitters', then multidimensional protocols'.
CHECKS: tuple[Callable[[Subject, Any], None], ...] = HEAVY_HITTER_CHECKS + multidim.CHECKS
#: Their configuration (:class:`ProtocolCheckConfig`).
CONFIG = ProtocolCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: ProtocolCheckConfig) -> bool:
    """The heavy-hitter checks concern heavy-hitter protocols (tags: ``result = identified-items``);
    an itemset protocol (``identified-itemsets``) gets the round-oracle audits and the accounting
    check (its entries are itemsets, so the planted-items check does not apply); the longitudinal
    ones concern protocols over rounds (tags: ``records`` has ``sequence``), the multidimensional
    ones protocols that take tuples (``records = ("tuple",)``)."""
    protocol = subject.build()
    if check in longitudinal.CHECKS:
        return longitudinal.concerns(protocol)
    if check in multidim.CHECKS:
        return multidim.is_multidimensional(protocol)
    result = protocol.tags().result
    if result == IDENTIFIED_ITEMSETS:
        return check is not check_protocol_identifies_planted
    return result == IDENTIFIED_ITEMS
