"""The longitudinal protocol checks (a protocol whose tags take records ``sequence``;
docs/longitudinal.md): its accounting declares ``epsilon_inf``, ``epsilon_1`` and what a change of
value costs, every round's estimate is unbiased, and the averaging attack across rounds
(``ldpbench.audit.averaging``) shows no more loss than it claims.

Sizes are small (the kit runs them for every built-in longitudinal protocol in the suite): d = 8
items, 3000 users over 3 rounds in which a fifth of the users re-draw their item per round, 30
repeats; the audit with 3000 users per number of rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _rng
from ldpbench.types import Population, Protocol
from ldpbench.types.rounds import ROUND_LABEL, Rounds

#: The record shape these checks concern.
SEQUENCE = "sequence"


@dataclass(frozen=True)
class LongitudinalCheckConfig:
    """Budgets, sizes and seeds of the longitudinal checks (kept in ``ProtocolCheckConfig``)."""

    seed: int = 0
    rounds_epsilon: float = 2.0
    rounds_d: int = 8
    rounds_n: int = 3000
    rounds_T: int = 3  # noqa: N815 - the papers' name
    rounds_redraw: float = 0.2
    rounds_repeats: int = 30
    #: largest |mean - truth| / its standard error over every (round, item): 5 sigma
    rounds_z: float = 5.0
    audit_rounds: tuple[int, ...] = (1, 16)
    audit_users: int = 3000
    audit_alpha: float = 0.05


def concerns(protocol: Protocol) -> bool:
    """Whether the protocol collects over rounds (its tags take records ``sequence``)."""
    return SEQUENCE in tuple(protocol.tags().records)


def _build(subject: Subject) -> Protocol:
    protocol = subject.build()
    assert isinstance(protocol, Protocol), f"{subject.label}: building it gave {type(protocol).__name__}"
    if not concerns(protocol):
        raise CheckSkipped("the checks concern longitudinal protocols (records 'sequence')")
    return protocol


def rounds_population(cfg: LongitudinalCheckConfig, rng: np.random.Generator) -> Population:
    """``n`` users over ``T`` rounds, Zipf-like over ``[d]`` in round 0; each user re-draws their
    item from the same shares with probability ``redraw`` per round (users who keep it and users
    who change, both)."""
    d, n = cfg.rounds_d, cfg.rounds_n
    shares = 1.0 / np.arange(1, d + 1)
    shares /= shares.sum()
    items = np.empty((cfg.rounds_T, n), dtype=np.int64)
    items[0] = rng.choice(d, size=n, p=shares)
    for t in range(1, cfg.rounds_T):
        redraw = rng.random(n) < cfg.rounds_redraw
        items[t] = np.where(redraw, rng.choice(d, size=n, p=shares), items[t - 1])
    return Population(np.bincount(items[0], minlength=d), name="rounds", record=SEQUENCE, rounds=Rounds(items))


def check_protocol_longitudinal_accounting(subject: Subject, cfg: LongitudinalCheckConfig) -> None:
    """Every group declares ``epsilon_inf`` (a number at most the budget, or ``None``: no bound
    over rounds), ``epsilon_1`` (one report's budget, positive, at most ``epsilon_inf``) and
    ``on_change`` (what a change of value costs)."""
    protocol = _build(subject)
    eps = cfg.rounds_epsilon
    groups = protocol.privacy_accounting(eps)
    assert groups, f"{subject.label}: privacy_accounting declared no group"
    for group in groups:
        who = f"{subject.label}: group {group.get('group')!r}"
        missing = [k for k in ("epsilon_inf", "epsilon_1", "on_change") if k not in group]
        assert not missing, f"{who} does not declare {', '.join(missing)} (docs/longitudinal.md, Accounting)"
        inf, one = group["epsilon_inf"], group["epsilon_1"]
        assert one is not None and 0 < float(one), f"{who}: epsilon_1 = {one!r}, not a positive budget"
        if inf is not None:
            assert float(inf) <= eps * (1 + 1e-12), f"{who}: epsilon_inf = {inf} exceeds the budget {eps}"
            assert float(one) <= float(inf) * (1 + 1e-12), f"{who}: epsilon_1 = {one} > epsilon_inf = {inf}"
        assert isinstance(group["on_change"], str) and group["on_change"], f"{who}: on_change says nothing"


def check_protocol_longitudinal_rounds_unbiased(subject: Subject, cfg: LongitudinalCheckConfig) -> None:
    """Every round's estimate (output ``round-t``) is unbiased for that round's users: over
    ``repeats`` runs, every (round, item) mean lies within ``z`` standard errors of the truth (the
    estimate's declared ``variance`` where it has one, else the repeats' own)."""
    protocol = _build(subject)
    population = rounds_population(cfg, _rng(cfg, "rounds-population"))
    simulation = "aggregate" if protocol.tags().aggregate else "per-user"
    T, d, n = cfg.rounds_T, cfg.rounds_d, cfg.rounds_n  # noqa: N806
    est = np.empty((cfg.rounds_repeats, T, d))
    declared = np.full((T, d), np.nan)
    for r in range(cfg.rounds_repeats):
        outputs = protocol.run(population, cfg.rounds_epsilon, _rng(cfg, "rounds-run", r), simulation=simulation)
        for t in range(T):
            label = ROUND_LABEL.format(t=t + 1)
            assert label in outputs, f"{subject.label}: no output {label!r} (got {sorted(outputs)})"
            est[r, t] = np.asarray(outputs[label].frequencies, dtype=float)
            if outputs[label].variance is not None and r == 0:
                declared[t] = np.asarray(outputs[label].variance, dtype=float)
    truth = np.stack([np.bincount(population.rounds.items[t], minlength=d) / n for t in range(T)])
    var = np.where(np.isfinite(declared), declared, est.var(axis=0, ddof=1))
    z = np.abs(est.mean(axis=0) - truth) / np.sqrt(var / cfg.rounds_repeats)
    worst = np.unravel_index(int(np.nanargmax(z)), z.shape)
    assert float(z[worst]) < cfg.rounds_z, (
        f"{subject.label}: round {worst[0] + 1}, item {worst[1]}: mean {est.mean(axis=0)[worst]:.4f} vs "
        f"truth {truth[worst]:.4f}, {z[worst]:.1f} standard errors ({cfg.rounds_repeats} runs, n = {n}, "
        f"epsilon = {cfg.rounds_epsilon:g}, {simulation})"
    )


def check_protocol_longitudinal_averaging_audit(subject: Subject, cfg: LongitudinalCheckConfig) -> None:
    """The averaging attack across rounds (``ldpbench audit NAME``, quick form) finds no more loss
    than the protocol claims for T reports of one value, ``min(epsilon_inf, T epsilon_1)``; the
    protocol must implement ``static_supports`` for it, and a declared ``epsilon_inf`` beyond the
    attack's reach at these sizes is no pass."""
    from ldpbench.audit.averaging import rounds_audit

    protocol = _build(subject)
    audit = rounds_audit(
        protocol,
        name=subject.label,
        d=cfg.rounds_d,
        epsilons=[cfg.rounds_epsilon],
        rounds=cfg.audit_rounds,
        users=cfg.audit_users,
        alpha=cfg.audit_alpha,
        seed=cfg.seed,
    )
    assert not audit.errors, f"{subject.label}: {'; '.join(audit.errors)}"
    assert audit.audited, f"{subject.label}: not audited: {audit.reason} (implement Protocol.static_supports)"
    lines = "; ".join(b.status() for b in audit.budgets)
    assert not audit.failed, f"{subject.label}: {lines}"
    assert not audit.partial, f"{subject.label}: {lines}"


#: The longitudinal checks, in the order they run.
CHECKS = (
    check_protocol_longitudinal_accounting,
    check_protocol_longitudinal_rounds_unbiased,
    check_protocol_longitudinal_averaging_audit,
)
