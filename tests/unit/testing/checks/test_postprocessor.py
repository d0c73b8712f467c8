"""The conformance kit's post-processor checks (ldpbench/testing/checks/postprocessor.py) catch broken post-processors."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import CheckSkipped, check_postprocessor, postprocessor_checks
from ldpbench.types import Estimate, PostProcessor

# -- broken post-processors --------------------------------------------------------------------


class ClipInPlace(PostProcessor):
    """Clips negatives by writing into the input's array."""

    name = "clip-in-place"

    def apply(self, estimate, rng):
        f = np.asarray(estimate.frequencies)
        np.maximum(f, 0, out=f)
        return estimate.replace(frequencies=f)


class Jitter(PostProcessor):
    """Adds noise from the global random state."""

    name = "jitter"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.frequencies + np.random.normal(0, 1e-9, estimate.d))


class Rescale(PostProcessor):
    """Forgets n (returns a count-scale estimate with n = 1)."""

    name = "rescale"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.counts, n=1)


class Truncate(PostProcessor):
    """Drops the last item."""

    name = "truncate"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.frequencies[:-1])


class QueryNoAnswer(PostProcessor):
    """Declares it acts on queries but never implements answer()."""

    name = "query-no-answer"
    acts_on = "queries"


class Good(PostProcessor):
    name = "good"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=np.maximum(estimate.frequencies, 0), steps=estimate.steps + (self.name,))


PP_SMALL = dict(d=8, epsilons=(1.0,))


def run_pp(obj, check):
    return dict(postprocessor_checks(obj, **PP_SMALL))[check]()


@pytest.mark.parametrize(
    ("broken", "check", "message"),
    [
        (ClipInPlace, "check_postprocessor_does_not_mutate_input", "modified its input"),
        (Jitter, "check_postprocessor_no_global_random_state", "global random state"),
        (Jitter, "check_postprocessor_deterministic", "same seed"),
        (Rescale, "check_postprocessor_keeps_metadata", "n or epsilon changed"),
        (Truncate, "check_postprocessor_returns_estimate", "output length"),
        (QueryNoAnswer, "check_postprocessor_query_answers", "answer"),
    ],
)
def test_postprocessor_bugs_are_caught(broken, check, message):
    with pytest.raises((AssertionError, NotImplementedError), match=message):
        run_pp(broken, check)


def test_a_correct_postprocessor_passes_everything():
    result = check_postprocessor(Good, **PP_SMALL)
    assert result["check_postprocessor_query_answers"].startswith("skipped")
    assert all(v == "passed" for k, v in result.items() if k != "check_postprocessor_query_answers")


def test_a_postprocessor_may_decline_some_inputs_but_not_all():
    from ldpbench.errors import UsageError

    class NeedsHistogram(PostProcessor):
        name = "needs-histogram"

        def apply(self, estimate: Estimate, rng):
            if estimate.report_histogram is None:
                raise UsageError("needs a report histogram")
            return estimate

    class DeclinesAll(PostProcessor):
        name = "declines-all"

        def apply(self, estimate, rng):
            raise UsageError("never")

    run_pp(NeedsHistogram, "check_postprocessor_returns_estimate")
    with pytest.raises(AssertionError, match="declined every input"):
        run_pp(DeclinesAll, "check_postprocessor_returns_estimate")
    with pytest.raises(CheckSkipped):
        run_pp(Good, "check_postprocessor_query_answers")
