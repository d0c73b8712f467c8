"""The metric checks of the conformance kit (ldpbench/testing/checks/metric.py) fail on broken metrics, naming the check."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import check_dataset, check_metric, metric_checks
from ldpbench.types import Dataset, Metric, Population


class MaxError(Metric):
    name = "max-error-kit"

    def score(self, truth, estimate, rng):
        return float(np.max(np.abs(estimate.item_answers() - truth.frequencies)))


class PrefersNoise(MaxError):
    """Claims lower is better but rewards distance from the truth."""

    name = "prefers-noise"

    def score(self, truth, estimate, rng):
        return -super().score(truth, estimate, rng)


class GlobalRandom(MaxError):
    name = "global-random"

    def score(self, truth, estimate, rng):
        return super().score(truth, estimate, rng) + 1e-9 * np.random.random()


class Unseeded(MaxError):
    name = "unseeded-metric"

    def score(self, truth, estimate, rng):
        return super().score(truth, estimate, rng) + 1e-9 * np.random.default_rng().random()


class Mutates(MaxError):
    name = "mutates"

    def score(self, truth, estimate, rng):
        truth.counts[0] += 1  # writes into its input
        return super().score(truth, estimate, rng)


class PrepareShifts(MaxError):
    """A prepare that leaves state behind which changes the scores after it."""

    name = "prepare-shifts"
    shift = 0.0

    def prepare(self, truth, estimates, rng):
        self.shift = 1e-9

    def score(self, truth, estimate, rng):
        return super().score(truth, estimate, rng) + self.shift


class PrepareFails(MaxError):
    name = "prepare-fails"

    def prepare(self, truth, estimates, rng):
        raise ValueError("no batch today")


class Geometric(Dataset):
    name = "geometric-kit"

    def load(self, rng):
        return Population(np.array([50, 25, 12, 6, 3, 2, 1, 1]), name="geometric")


def test_a_correct_metric_and_dataset_pass():
    assert set(check_metric(MaxError, oracles=("grr", "oue")).values()) == {"passed"}
    assert set(check_dataset(Geometric).values()) == {"passed"}


@pytest.mark.parametrize(
    ("metric", "failing"),
    [
        (PrefersNoise, "check_metric_prefers_the_truth"),
        (GlobalRandom, "check_metric_no_global_random_state"),
        (Mutates, "check_metric_does_not_mutate_inputs"),
        (Unseeded, "check_metric_reproducible"),
        (PrepareShifts, "check_metric_prepare_changes_no_score"),
        (PrepareFails, "check_metric_prepare_changes_no_score"),
    ],
)
def test_a_broken_metric_fails_its_check(metric, failing):
    with pytest.raises(AssertionError, match=failing):
        check_metric(metric, oracles=("grr", "oue"))
    checks = dict(metric_checks(metric, oracles=("grr",)))
    with pytest.raises(AssertionError):
        checks[failing]()


def test_an_expected_failure_is_recorded_not_raised():
    out = check_metric(
        PrefersNoise, oracles=("grr",), expected_failed_checks={"check_metric_prefers_the_truth": "a score of distance"}
    )
    assert out["check_metric_prefers_the_truth"] == "expected failure: a score of distance"
