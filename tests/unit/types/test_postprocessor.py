"""The post-processor contract (ldpbench/types/postprocessor.py): its registration rules, its tags,
and a query-time step that the default ``apply`` attaches to the estimate."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Estimate, PostProcessor


class Halve(PostProcessor):
    name = "halve"


class ClipAnswers(PostProcessor):
    name = "clip-answers"
    acts_on = "queries"

    def answer(self, sums, estimate):
        return np.maximum(sums, 0.0)


def test_an_estimate_step_must_implement_apply():
    with pytest.raises(NotImplementedError, match=r"Halve\.apply"):
        Halve().apply(Estimate(np.array([0.5, 0.5]), n=10, epsilon=1.0), np.random.default_rng(0))
    assert Halve().tags().acts_on == "estimate"
    assert PostProcessor.contract_problems(Halve) == []


def test_a_query_time_step_is_attached_to_the_estimate_not_applied():
    est = Estimate(np.array([0.7, -0.2, 0.5]), n=10, epsilon=1.0)
    step = ClipAnswers()
    out = step.apply(est, np.random.default_rng(0))
    assert out.query_transforms == (step,) and est.query_transforms == ()
    np.testing.assert_array_equal(out.frequencies, est.frequencies)
    assert step.tags().acts_on == "queries"


def test_the_registration_rules_name_what_is_wrong():
    no_answer = type("NoAnswer", (PostProcessor,), {"name": "no-answer", "acts_on": "queries"})
    sideways = type("Sideways", (PostProcessor,), {"name": "sideways", "acts_on": "items"})
    assert PostProcessor.contract_problems(ClipAnswers) == []
    assert PostProcessor.contract_problems(no_answer) == ["acts_on = 'queries' needs answer(sums, estimate)"]
    assert PostProcessor.contract_problems(sideways) == ["acts_on must be 'estimate' or 'queries', got 'items'"]
