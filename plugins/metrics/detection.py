"""Detection metrics of a poisoned cell (docs/poisoning.md §Defenses): how well a detecting
defense (``detect-fake-users``) told the fake reports from the genuine ones.

A metric may see the labels, a defense may not: the labels are the truth's
:attr:`Poisoning.fake_reports <ldpbench.types.Poisoning.fake_reports>` (one bool per kept report,
in the order the defense saw them), the verdict the estimate's ``flagged_reports``. A pipeline
without a detecting step flagged nothing: precision 1, recall 0 (1 with no fake user).
Conventions as docs/algorithms.md §6.4's: precision is 1 when nothing is flagged, recall 1 when
nothing is fake.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate, Metric, MetricTags, Population


def _counts(truth: Population, estimate: Estimate, who: str) -> tuple[int, int, int]:
    """``(true positives, flagged, fake)`` of the estimate's verdict against the labels."""
    plan = truth.poisoning
    if plan is None:
        raise NotApplicable(f"metric '{who}' scores a poisoned cell only (give the spec 'attacks')")
    flagged = estimate.flagged_reports
    if flagged is None:
        return 0, 0, plan.fake_users
    labels = plan.fake_reports
    if labels is None:
        raise NotApplicable(f"metric '{who}': the engine kept no reports to label (per-user path only)")
    flagged = np.asarray(flagged, dtype=bool)
    if flagged.shape != labels.shape:
        raise NotApplicable(f"metric '{who}': {flagged.size} verdicts for {labels.size} reports")
    return int(np.count_nonzero(flagged & labels)), int(np.count_nonzero(flagged)), int(np.count_nonzero(labels))


class DetectionPrecision(Metric):
    """The share of the flagged reports that are fake (1 when none is flagged)."""

    name = "detection-precision"
    greater_is_better = True

    def tags(self) -> MetricTags:
        return MetricTags(poisoning=True)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        tp, flagged, _ = _counts(truth, estimate, self.name)
        return tp / flagged if flagged else 1.0


class DetectionRecall(Metric):
    """The share of the fake reports that are flagged (1 when there is none)."""

    name = "detection-recall"
    greater_is_better = True

    def tags(self) -> MetricTags:
        return MetricTags(poisoning=True)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        tp, _, fake = _counts(truth, estimate, self.name)
        return tp / fake if fake else 1.0


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(DetectionPrecision)
    registry.register(DetectionRecall)
