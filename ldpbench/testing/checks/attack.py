"""The attack checks (docs/poisoning.md): on every built-in oracle the attack declares, ``craft``
gives ``m`` reports in the oracle's encoding that its aggregator takes (one message per fake user,
support counts of length d), leaves the targets alone, gives the same reports for the same seed and
touches no global random state; and the attack promotes its targets: the fake reports support the
targets at least as often, on average, as the other items. An attack that declares protocols
(``Attack.protocols``) also crafts a round's local-hashing reports (``craft_hashed``): m seeds and m
values in ``[0, g)``, the same for the same seed, supporting each target key at least at the
random rate ``1/g``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _global_state, _rng, _same_state
from ldpbench.types import Attack, Oracle

#: What an attack's ``oracles`` holds when it is defined for every oracle.
ANY_ORACLE = "*"


@dataclass(frozen=True)
class AttackCheckConfig:
    """Sizes of the attack checks."""

    d: int = 16
    epsilons: tuple[float, ...] = (1.0, 4.0)
    seed: int = 0
    #: fake users crafted per oracle and budget
    m: int = 2000
    #: the targets (items of ``[0, d)``)
    targets: tuple[int, ...] = (3, 11)
    #: oracles to craft for; ``None`` = every oracle of the ldpbench distribution the attack declares
    oracles: tuple[str, ...] | None = None


def _attack(subject: Subject) -> Attack:
    attack = subject.build()
    assert isinstance(attack, Attack), f"{subject.label}: building it gave {type(attack).__name__}, not an Attack"
    return attack


def _oracles(subject: Subject, cfg: AttackCheckConfig) -> list[Oracle]:
    """The oracles the checks craft for: the built-in ones the attack declares, at each budget."""
    plugins = subject.get_plugins()
    declared = tuple(_attack(subject).tags().oracles)
    names = cfg.oracles
    if names is None:
        names = tuple(i.name for i in plugins.registry("oracle") if i.origin.distribution == "ldpbench")
    chosen = [n for n in names if ANY_ORACLE in declared or n in declared]
    if not chosen:
        raise CheckSkipped(f"{subject.label} declares none of the oracles {', '.join(names)}")
    return [plugins.create("oracle", n, d=cfg.d, epsilon=e) for n in chosen for e in cfg.epsilons]


def _targets(cfg: AttackCheckConfig) -> np.ndarray:
    targets = np.array(sorted(cfg.targets), dtype=np.int64)
    targets.flags.writeable = False
    return targets


def _craft(subject: Subject, oracle: Oracle, cfg: AttackCheckConfig, seed: int) -> Any:
    rng = _rng(cfg, "craft", oracle.name, oracle.epsilon, seed)
    return _attack(subject).craft(oracle, _targets(cfg), cfg.m, rng)


def check_attack_reports_aggregate(subject: Subject, cfg: AttackCheckConfig) -> None:
    """m fake users' reports: one message each (``encode_reports``) and support counts of length d
    in [0, m] that the oracle's own aggregator computes (what the engine adds to the genuine ones)."""
    for oracle in _oracles(subject, cfg):
        where = f"{subject.label} on {oracle.name}, epsilon={oracle.epsilon}"
        reports = _craft(subject, oracle, cfg, 0)
        try:
            messages = oracle.encode_reports(reports, cfg.m)
        except (TypeError, ValueError) as exc:  # the encoder refuses reports of another number of users
            raise AssertionError(f"{where}: the reports are not messages for {cfg.m} fake users ({exc})") from exc
        assert len(messages) == cfg.m, f"{where}: {len(messages)} messages for {cfg.m} fake users"
        support = np.asarray(oracle.support_counts(reports))
        assert support.shape == (cfg.d,), f"{where}: support counts of shape {support.shape}, not ({cfg.d},)"
        if oracle.tags().real_valued_counts:  # summed real-valued reports (SHE): finite sums
            assert np.all(np.isfinite(support)), f"{where}: support sums that are not finite"
        else:
            assert np.all((support >= 0) & (support <= cfg.m)), f"{where}: support counts outside [0, m]"


def check_attack_promotes_the_targets(subject: Subject, cfg: AttackCheckConfig) -> None:
    """The fake reports support each target at least as often as the average other item, within
    sampling noise (5 standard errors of a Bernoulli mean at the other items' rate): an attack that
    does not favour its targets is not crafting for them."""
    targets = _targets(cfg)
    others = np.setdiff1d(np.arange(cfg.d), targets)
    for oracle in _oracles(subject, cfg):
        if oracle.tags().real_valued_counts:  # Laplace sums: no Bernoulli bound on their noise
            continue
        support = np.asarray(oracle.support_counts(_craft(subject, oracle, cfg, 1)), dtype=float) / cfg.m
        rate = min(max(float(support[others].mean()), 1.0 / cfg.m), 1 - 1.0 / cfg.m)
        slack = 5 * np.sqrt(rate * (1 - rate) / cfg.m)
        assert support[targets].min() >= support[others].mean() - slack, (
            f"{subject.label} on {oracle.name}, epsilon={oracle.epsilon}: the targets are supported by "
            f"{support[targets].round(3).tolist()} of the fake reports, the other items by "
            f"{support[others].mean():.3f} on average"
        )


def check_attack_reproducible(subject: Subject, cfg: AttackCheckConfig) -> None:
    """The same rng seed gives the same reports (all randomness from the generator passed in)."""
    for oracle in _oracles(subject, cfg):
        a = oracle.encode_reports(_craft(subject, oracle, cfg, 2), cfg.m)
        b = oracle.encode_reports(_craft(subject, oracle, cfg, 2), cfg.m)
        same = np.array_equal(a, b) if isinstance(a, np.ndarray) else list(a) == list(b)
        assert same, f"{subject.label} on {oracle.name}: two crafts with the same seed differ"


def check_attack_no_global_random_state(subject: Subject, cfg: AttackCheckConfig) -> None:
    """craft() neither draws from nor reseeds numpy's or the stdlib's global random state."""
    oracles = _oracles(subject, cfg)
    before = _global_state()
    for oracle in oracles:
        _craft(subject, oracle, cfg, 3)
    assert _same_state(before, _global_state()), (
        f"{subject.label}: the global random state changed; draw only from the rng you are given"
    )


def check_attack_rounds(subject: Subject, cfg: AttackCheckConfig) -> None:
    """``craft_hashed`` (attacks with ``protocols``): ``cfg.m`` uint64 seeds and values in [0, g),
    reproducible, each target key supported at least at the random rate 1/g (5 standard errors)."""
    attack = _attack(subject)
    if not tuple(attack.tags().protocols):
        raise CheckSkipped(f"{subject.label} declares no protocol")
    from ldpbench_plugins.oracles import _hashing  # the hash family of PEM's rounds

    keys = _hashing.value_keys(_targets(cfg))
    for eps in cfg.epsilons:
        g = int(round(np.exp(eps))) + 1
        where = f"{subject.label}, craft_hashed at epsilon={eps} (g = {g})"
        seeds, values = _attack(subject).craft_hashed(keys, g, eps, cfg.m, _rng(cfg, "rounds", eps, 0))
        seeds, values = np.asarray(seeds), np.asarray(values)
        assert seeds.shape == (cfg.m,) and seeds.dtype == np.uint64, f"{where}: not {cfg.m} uint64 seeds"
        assert values.shape == (cfg.m,) and np.all((values >= 0) & (values < g)), f"{where}: values outside [0, g)"
        # a fresh attack, as the engine builds one per cell (an attack may reuse work across a cell's chunks)
        again = _attack(subject).craft_hashed(keys, g, eps, cfg.m, _rng(cfg, "rounds", eps, 0))
        assert np.array_equal(seeds, again[0]) and np.array_equal(values, again[1]), f"{where}: not reproducible"
        support = (_hashing.hash_table(seeds, keys, g) == values[:, None]).mean(axis=0)
        slack = 5 * np.sqrt((1 / g) * (1 - 1 / g) / cfg.m)
        assert support.min() >= 1 / g - slack, f"{where}: the targets supported by {support.round(3).tolist()}"


#: Hygiene last: the reports must aggregate before anything else means something.
CHECKS: tuple[Callable[[Subject, Any], None], ...] = (
    check_attack_reports_aggregate,
    check_attack_promotes_the_targets,
    check_attack_reproducible,
    check_attack_rounds,
    check_attack_no_global_random_state,
)
#: Their configuration (:class:`AttackCheckConfig`).
CONFIG = AttackCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: AttackCheckConfig) -> bool:
    """Every attack check concerns every attack, but ``check_attack_rounds`` only those that
    declare protocols."""
    if check is check_attack_rounds:
        return bool(tuple(_attack(subject).tags().protocols))
    return True
