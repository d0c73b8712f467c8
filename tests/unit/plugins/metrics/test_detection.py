"""detection-precision / detection-recall: a defense's verdict against the fake labels (hand-built)."""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate, Poisoning, Population

RNG = np.random.default_rng(0)
PLUGINS = builtin_plugins()
LABELS = np.array([False, True, False, True, True, False])  # m = 3 fake reports


def truth(labels=LABELS) -> Population:
    plan = Poisoning("mga", np.array([1, 2]), int(np.sum(labels)), 0.5, fake_reports=labels)
    return Population(np.array([2, 1, 0, 0]), poisoning=plan)


def score(name: str, flagged, t=None) -> float:
    est = Estimate(np.full(4, 0.25), 6, 1.0, "oue", flagged_reports=None if flagged is None else np.array(flagged))
    return PLUGINS.create("metric", name, {}).score(t or truth(), est, RNG)


def test_precision_and_recall_of_a_verdict():
    flagged = [True, True, False, True, False, False]  # 2 of the 3 fakes, 1 genuine
    assert score("detection-precision", flagged) == pytest.approx(2 / 3)
    assert score("detection-recall", flagged) == pytest.approx(2 / 3)
    assert score("detection-precision", LABELS) == 1.0 and score("detection-recall", LABELS) == 1.0


def test_conventions_nothing_flagged_and_no_detecting_step():
    none = [False] * 6
    assert score("detection-precision", none) == 1.0 and score("detection-recall", none) == 0.0
    assert score("detection-precision", None) == 1.0 and score("detection-recall", None) == 0.0
    no_fake = truth(np.zeros(6, dtype=bool))
    assert score("detection-recall", None, no_fake) == 1.0


def test_not_applicable_without_an_attack_or_without_kept_labels():
    with pytest.raises(NotApplicable, match="poisoned cell only"):
        score("detection-recall", [True] * 6, Population(np.array([2, 1, 0, 0])))
    unlabelled = Population(np.array([2, 1, 0, 0]), poisoning=Poisoning("mga", np.array([1]), 3, 0.5))
    with pytest.raises(NotApplicable, match="kept no reports"):
        score("detection-precision", [True] * 6, unlabelled)
    with pytest.raises(NotApplicable, match="5 verdicts for 6 reports"):
        score("detection-precision", [True] * 5)
