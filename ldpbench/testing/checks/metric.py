"""The metric checks: a finite float on estimates of every built-in oracle, the exact estimate
scored at least as well as the noisy ones, the same score for the same seed, inputs left alone,
no global random state, a ``theory`` that is a float, and a ``prepare`` that changes no score.

A metric that scores identified items (its tags' ``results``; docs/data-model.md) is checked the
same way on the results of every built-in heavy-hitter protocol, the "exact estimate" being the
true top-k with the true frequencies; one that scores only identified itemsets on the results of
every built-in itemset protocol over a set-valued population, the exact estimate being the true
top-k itemsets (``ldpbench.types.itemsets``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.testing.checks.machinery import Subject, _global_state, _rng, _same_state, _simulate
from ldpbench.types import Estimate, IdentifiedItems, IdentifiedItemsets, Metric, Poisoning, Population
from ldpbench.types.domain import FREQUENCIES, IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS
from ldpbench.types.itemsets import true_top_itemsets


@dataclass(frozen=True)
class MetricCheckConfig:
    """Sizes of the metric checks."""

    d: int = 16
    epsilons: tuple[float, ...] = (1.0, 4.0)
    seed: int = 0
    n: int = 5000
    #: oracles whose estimates are scored; ``None`` = every oracle of the ldpbench distribution
    oracles: tuple[str, ...] | None = None


def _metric(subject: Subject) -> Metric:
    metric = subject.build()
    assert isinstance(metric, Metric), f"{subject.label}: building it gave {type(metric).__name__}, not a Metric"
    return metric


def _truth(cfg: MetricCheckConfig) -> Population:
    """A fixed skewed population (item v has weight 1/(v+1)^1.1), every item present, carrying
    an attack's plan (docs/poisoning.md) with its two rarest items as targets and no fake user:
    what a metric that scores poisoned cells (``MetricTags.poisoning``) reads; others ignore it."""
    rng = np.random.default_rng(np.random.SeedSequence([int(cfg.seed), 13]))
    weights = 1.0 / np.arange(1, cfg.d + 1) ** 1.1
    counts = rng.multinomial(cfg.n - cfg.d, weights / weights.sum()) + 1
    targets = np.sort(np.argsort(counts, kind="stable")[:2])
    plan = Poisoning(attack="none", targets=targets, fake_users=0, beta=0.0)
    return Population(counts, name="metric-check", poisoning=plan)


def _scores_itemsets_only(subject: Subject) -> bool:
    return set(_metric(subject).tags().results) == {IDENTIFIED_ITEMSETS}


def _set_truth(cfg: MetricCheckConfig) -> Population:
    """A fixed set-valued population: each of n users draws 1 + Poisson(2) items with the weights
    of :func:`_truth` and holds the distinct ones (frequent pairs and triples exist)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(cfg.seed), 17]))
    weights = 1.0 / np.arange(1, cfg.d + 1) ** 1.1
    sizes = 1 + rng.poisson(2.0, size=cfg.n)
    draws = rng.choice(cfg.d, size=int(sizes.sum()), p=weights / weights.sum())
    pairs = np.unique(np.repeat(np.arange(cfg.n), sizes) * cfg.d + draws)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(pairs // cfg.d, minlength=cfg.n))])
    return Population.from_sets(offsets, pairs % cfg.d, cfg.d)


def _truth_for(subject: Subject, cfg: MetricCheckConfig) -> Population:
    """The truth the metric's inputs come from: set-valued for an itemset metric."""
    return _set_truth(cfg) if _scores_itemsets_only(subject) else _truth(cfg)


def _estimates(subject: Subject, cfg: MetricCheckConfig) -> list[tuple[str, Any]]:
    """Raw estimates of every built-in oracle at each epsilon (cached); for a metric that scores
    only identified items, the results of every built-in heavy-hitter protocol instead."""
    key = ("metric-inputs", cfg)
    if key in subject.cache:
        return subject.cache[key]
    plugins = subject.get_plugins()
    takes = _metric(subject).tags().results
    if _scores_itemsets_only(subject):
        subject.cache[key] = _identified(plugins, cfg, IDENTIFIED_ITEMSETS, _set_truth(cfg))
        return subject.cache[key]
    if FREQUENCIES not in takes and IDENTIFIED_ITEMS in takes:
        subject.cache[key] = _identified(plugins, cfg)
        return subject.cache[key]
    names = cfg.oracles
    if names is None:
        names = tuple(i.name for i in plugins.registry("oracle") if i.origin.distribution == "ldpbench")
    truth = _truth(cfg)
    rng = _rng(cfg, "metric-inputs")
    out = []
    for name in names:
        for eps in cfg.epsilons:
            o = plugins.create("oracle", name, d=cfg.d, epsilon=eps)
            path = "aggregate" if o.tags().aggregate else "per-user"
            out.append((f"{name}, epsilon={eps}", _simulate(o, truth.counts, rng, path)))
    subject.cache[key] = out
    return out


#: How many items the heavy-hitter protocols are asked for in the metric checks.
IDENTIFY_K = 4


def _identified(
    plugins: Any, cfg: MetricCheckConfig, kind: str = IDENTIFIED_ITEMS, truth: Population | None = None
) -> list[tuple[str, IdentifiedItems]]:
    """The results of every built-in protocol whose result is ``kind``, at each epsilon."""
    truth = _truth(cfg) if truth is None else truth
    rng = _rng(cfg, "metric-inputs")
    out = []
    for info in plugins.registry("protocol"):
        if info.origin.distribution != "ldpbench":
            continue
        protocol = plugins.create(
            "protocol", info.name, {"k": IDENTIFY_K} if any(p.name == "k" for p in info.params) else {}
        )
        if protocol.tags().result != kind:
            continue
        for eps in cfg.epsilons:
            for result in protocol.run(truth, eps, rng).values():
                out.append((f"{info.name}, epsilon={eps}", result))
    return out


def _exact(truth: Population, like: Any) -> Any:
    """The estimate that knows the truth: the true frequencies, no noise left (for identified
    items: the true top-k, with the true frequencies and the same cost figures; for itemsets the
    true top-k itemsets)."""
    if isinstance(like, IdentifiedItemsets):
        masks, supports, items = true_top_itemsets(truth, like.k)
        rows, cols = np.nonzero((masks[:, None] >> np.arange(items.size, dtype=np.uint64)[None, :]) & np.uint64(1))
        members = truth.items[items[cols]]
        return like.replace(
            items=np.arange(masks.size, dtype=np.uint64),
            frequencies=supports / truth.n,
            itemset_offsets=np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=masks.size))]).astype(np.int64),
            itemset_members=members[np.lexsort((members, rows))],
        )
    if isinstance(like, IdentifiedItems):
        items = truth.items
        top = np.lexsort((items, -truth.counts))[: like.k]
        return like.replace(items=items[top], frequencies=truth.frequencies[top].astype(float))
    return like.replace(frequencies=truth.frequencies.astype(float), variance=np.zeros(truth.d))


def _score(metric: Metric, truth: Population, est: Estimate, seed: int, where: str) -> float:
    value = metric.score(truth, est, np.random.default_rng(seed))
    assert isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool), (
        f"{where}: score() must return a float, got {type(value).__name__}"
    )
    return float(value)


def check_metric_scores_are_finite(subject: Subject, cfg: MetricCheckConfig) -> None:
    """score() is a finite float on the raw estimate of every built-in oracle and on the exact one."""
    metric, truth = _metric(subject), _truth_for(subject, cfg)
    assert isinstance(type(metric).greater_is_better, bool), f"{subject.label}: greater_is_better must be a bool"
    for label, est in _estimates(subject, cfg) + [
        ("the exact estimate", _exact(truth, _estimates(subject, cfg)[0][1]))
    ]:
        value = _score(metric, truth, est, cfg.seed, f"{subject.label} on {label}")
        assert math.isfinite(value), f"{subject.label} on {label}: score() returned {value}"


def check_metric_prefers_the_truth(subject: Subject, cfg: MetricCheckConfig) -> None:
    """The exact estimate scores at least as well as every noisy one (a metric that can rank a
    noisy estimate above the truth measures something else; list it as an expected failure)."""
    metric, truth = _metric(subject), _truth_for(subject, cfg)
    better = max if type(metric).greater_is_better else min
    for label, est in _estimates(subject, cfg):
        noisy = _score(metric, truth, est, cfg.seed, f"{subject.label} on {label}")
        exact = _score(metric, truth, _exact(truth, est), cfg.seed, f"{subject.label} on the exact estimate")
        tolerance = 1e-12 * max(1.0, abs(exact), abs(noisy))
        assert better(exact, noisy) == exact or abs(exact - noisy) <= tolerance, (
            f"{subject.label} on {label}: the noisy estimate scores {noisy!r}, better than the exact "
            f"estimate's {exact!r} (greater_is_better={type(metric).greater_is_better})"
        )


def check_metric_reproducible(subject: Subject, cfg: MetricCheckConfig) -> None:
    """The same rng seed gives the same score (all randomness from the generator passed in)."""
    metric = _metric(subject)
    for label, est in _estimates(subject, cfg):
        a = _score(metric, _truth_for(subject, cfg), est, 7, f"{subject.label} on {label}")
        b = _score(_metric(subject), _truth_for(subject, cfg), est, 7, f"{subject.label} on {label}")
        assert a == b or (math.isnan(a) and math.isnan(b)), (
            f"{subject.label} on {label}: two scores with the same seed differ ({a!r} != {b!r})"
        )


def check_metric_does_not_mutate_inputs(subject: Subject, cfg: MetricCheckConfig) -> None:
    """score() leaves the truth's counts and the estimate's arrays unchanged."""
    metric, truth = _metric(subject), _truth_for(subject, cfg)
    for label, est in _estimates(subject, cfg):
        counts, freqs = truth.counts.copy(), np.array(est.frequencies, copy=True)
        _score(metric, truth, est, cfg.seed, f"{subject.label} on {label}")
        assert np.array_equal(truth.counts, counts), f"{subject.label} on {label}: score() changed the true counts"
        assert np.array_equal(est.frequencies, freqs, equal_nan=True), (
            f"{subject.label} on {label}: score() changed the estimate's frequencies"
        )


def check_metric_no_global_random_state(subject: Subject, cfg: MetricCheckConfig) -> None:
    """Scoring neither draws from nor reseeds numpy's or the stdlib's global random state."""
    metric, truth = _metric(subject), _truth_for(subject, cfg)
    estimates = _estimates(subject, cfg)
    before = _global_state()
    for label, est in estimates:
        _score(metric, truth, est, cfg.seed, f"{subject.label} on {label}")
    assert _same_state(before, _global_state()), (
        f"{subject.label}: the global random state changed; draw only from the rng you are given"
    )


def check_metric_theory(subject: Subject, cfg: MetricCheckConfig) -> None:
    """theory() returns a float (NaN when the metric has no formula), finite or NaN, never inf."""
    metric, truth = _metric(subject), _truth_for(subject, cfg)
    label, est = _estimates(subject, cfg)[0]
    declared = None if isinstance(est, IdentifiedItems) else est.variance  # identified items carry none
    variance = np.asarray(declared if declared is not None else np.zeros(truth.d), dtype=float)
    value = metric.theory(truth, est, variance)
    assert isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool), (
        f"{subject.label} on {label}: theory() must return a float, got {type(value).__name__}"
    )
    assert not math.isinf(float(value)), f"{subject.label} on {label}: theory() returned {value}"


def check_metric_prepare_changes_no_score(subject: Subject, cfg: MetricCheckConfig) -> None:
    """After ``prepare()`` on a cell's estimates (read-only, as the engine hands them), each
    ``score()`` returns what it does without it, bit for bit; ``prepare()`` raises nothing and
    leaves its inputs alone (``Metric.prepare``: only a speed-up)."""
    from ldpbench.boundary.values import frozen_result

    truth = _truth_for(subject, cfg)
    kinds = _metric(subject).tags().results
    estimates = [(label, est) for label, est in _estimates(subject, cfg) if est.result in kinds]
    estimates.append(("the exact estimate", _exact(truth, estimates[0][1])))
    words = [np.array(e.frequencies, dtype=float, copy=True) for _, e in estimates if isinstance(e, Estimate)]
    metric = _metric(subject)
    try:
        metric.prepare(truth, [frozen_result(e) for _, e in estimates], np.random.default_rng(cfg.seed))
    except Exception as exc:  # noqa: BLE001 - the engine ignores it, the author should not
        raise AssertionError(f"{subject.label}: prepare() raised {type(exc).__name__}: {exc}") from exc
    after = [np.asarray(e.frequencies, dtype=float) for _, e in estimates if isinstance(e, Estimate)]
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(words, after)), (
        f"{subject.label}: prepare() changed an estimate's frequencies"
    )
    for label, est in estimates:
        where = f"{subject.label} on {label}"
        prepared = _score(metric, truth, est, cfg.seed, where)
        alone = _score(_metric(subject), truth, est, cfg.seed, where)
        assert np.float64(prepared).tobytes() == np.float64(alone).tobytes(), (
            f"{where}: score() after prepare() is {prepared!r}, without it {alone!r}"
        )


#: Hygiene first: a metric that writes into its inputs or draws from global state would make the
#: later checks fail for a reason they do not name.
CHECKS: tuple[Callable[[Subject, Any], None], ...] = (
    check_metric_scores_are_finite,
    check_metric_does_not_mutate_inputs,
    check_metric_no_global_random_state,
    check_metric_reproducible,
    check_metric_prefers_the_truth,
    check_metric_theory,
    check_metric_prepare_changes_no_score,
)
#: Their configuration (:class:`MetricCheckConfig`).
CONFIG = MetricCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: MetricCheckConfig) -> bool:
    """Every metric check concerns every metric."""
    return True
