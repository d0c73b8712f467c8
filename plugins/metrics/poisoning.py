"""Metrics of a poisoned cell (docs/poisoning.md): the targets' frequency gain (Cao, Jia & Gong,
USENIX Security 2021, §2.3 Eq. 3) and the error on the genuine, non-target items.

Both read the truth's :attr:`~ldpbench.types.Population.poisoning` (the targets), which only
metrics receive; the truth's frequencies are the **genuine** users' (``n`` of them, no fake user).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, IdentifiedItems, Metric, MetricTags, Poisoning, Population
from ldpbench.types.domain import IDENTIFIED_ITEMS

from ._align import aligned_truth


def _poisoning(truth: Population, who: str) -> Poisoning:
    if truth.poisoning is None:
        raise NotApplicable(f"metric '{who}' scores a poisoned cell only (give the spec 'attacks')")
    return truth.poisoning


def _at(estimate: Estimate, truth: Population, items: np.ndarray, who: str) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, genuine truth)`` at ``items``, whatever items the estimate covers."""
    answers, f = estimate.item_answers(), aligned_truth(truth, estimate)
    if estimate.items is None:
        return answers[items], f[items]
    covered = np.asarray(estimate.items, dtype=np.int64)
    order = np.argsort(covered, kind="stable")
    at = np.searchsorted(covered, items, sorter=order)
    ok = at < covered.size
    ok[ok] = covered[order[at[ok]]] == items[ok]
    if not ok.all():
        raise NotApplicable(f"metric '{who}': the estimate does not cover target(s) {items[~ok].tolist()}")
    return answers[order[at]], f[order[at]]


class FrequencyGain(Metric):
    """The targets' frequency gain: ``sum_t f~_t - f_t`` over the target set (``target: -1``,
    the default) or the gain of one target (``target: k``, the k-th smallest target item).

    ``f~`` is the estimate from all ``n + m`` reports, ``f`` the **genuine** frequencies. Cao et
    al. (§2.3, Eq. 3) define the gain as ``sum_t E[f~_t after] - E[f~_t before]``; an unbiased
    oracle's expected estimate before the attack is ``f_t``, so this gain has the paper's
    expectation (one realization: it carries the estimate's noise as well). Greater is a stronger
    attack (``greater_is_better``: the attacker's view).
    """

    name = "frequency-gain"
    greater_is_better = True
    params = (Param("target", int, -1, "-1: the total over the targets; k >= 0: the k-th target's gain", min=-1),)

    def tags(self) -> MetricTags:
        return MetricTags(poisoning=True, marginal_expectation=True)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        plan = _poisoning(truth, self.name)
        targets = np.asarray(plan.targets, dtype=np.int64)
        if self.target >= 0:
            if self.target >= targets.size:
                raise NotApplicable(f"metric '{self.name}': target {self.target} of {targets.size} targets")
            targets = targets[self.target : self.target + 1]
        est, f = _at(estimate, truth, targets, self.name)
        return float(np.sum(est - f))


class GenuineMSE(Metric):
    """Mean squared error over the genuine (non-target) items: ``mean_{v not in T} (f~_v - f_v)^2``
    against the genuine frequencies: what the attack (and a defense) does to the other items."""

    name = "genuine-mse"
    greater_is_better = False

    def tags(self) -> MetricTags:
        return MetricTags(poisoning=True, marginal_expectation=True)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        plan = _poisoning(truth, self.name)
        answers, f = estimate.item_answers(), aligned_truth(truth, estimate)
        items = np.arange(truth.d) if estimate.items is None else np.asarray(estimate.items, dtype=np.int64)
        keep = ~np.isin(items, plan.targets)
        if not keep.any():
            raise NotApplicable(f"metric '{self.name}': every item is a target")
        return float(np.mean((answers[keep] - f[keep]) ** 2))


class TargetsIdentified(Metric):
    """The heavy-hitter attack's success (Cao, Jia & Gong §6): the fraction of the targets among
    the identified items of a heavy-hitter protocol (PEM), ``|T ∩ identified| / |T|``. Compare with
    the unattacked control (``attacks: [none, ...]``: the targets' genuine rank) and read the
    heavy-hitter metrics (``topk-f1``, ``ncr``, against the genuine users) for what the attack
    costs the other items."""

    name = "targets-identified"
    greater_is_better = True

    def tags(self) -> MetricTags:
        return MetricTags(results=(IDENTIFIED_ITEMS,), poisoning=True)

    def score(self, truth: Population, estimate: IdentifiedItems, rng: np.random.Generator) -> float:
        plan = _poisoning(truth, self.name)
        targets = np.asarray(plan.targets, dtype=np.uint64)
        return float(np.isin(targets, np.asarray(estimate.items, dtype=np.uint64)).mean())


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(FrequencyGain)
    registry.register(GenuineMSE)
    registry.register(TargetsIdentified)
