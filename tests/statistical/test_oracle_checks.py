"""The conformance kit's statistical oracle checks catch what they are for: the exact law catches an
independent-binomial shortcut, and ``check_oracle`` records expected failures and skips."""

from __future__ import annotations

import numpy as np
import pytest
from support import SMALL, Leaky, Wasteful, run_check

from ldpbench.testing import check_oracle
from ldpbench_plugins.oracles._common import independent_binomials
from ldpbench_plugins.oracles.grr import GRR


class IndependentGRR(GRR):
    """The tempting wrong shortcut: independent binomials per value. Right marginals, wrong joint law."""

    name = "independent-grr"

    def sample_report_histogram(self, true_counts, rng):
        return independent_binomials(np.asarray(true_counts), self.p_star, self.q_star, rng)


def test_exact_law_catches_the_independent_binomial_shortcut():
    # Marginals are right, so unbiasedness and the variance formula pass ...
    run_check(IndependentGRR, "check_unbiased_aggregate")
    # ... but the joint law is not GRR's (the histogram no longer sums to n).
    with pytest.raises(AssertionError, match="exact distribution"):
        run_check(IndependentGRR, "check_exact_law_aggregate")
    run_check(GRR, "check_exact_law_aggregate")


def test_check_oracle_reports_expected_failures_and_skips():
    result = check_oracle(
        Wasteful,
        **SMALL,
        expected_failed_checks={"check_output_table_ldp": "spends half the budget on purpose"},
    )
    assert result["check_output_table_ldp"].startswith("expected failure")
    assert result["check_constants"] == "passed"
    assert check_oracle("oue", **SMALL)["check_channel"].startswith("skipped")
    with pytest.raises(AssertionError, match="check_output_table_ldp failed"):
        check_oracle(Leaky, **SMALL)
    with pytest.raises(ValueError, match="unknown checks"):
        check_oracle(GRR, **SMALL, expected_failed_checks={"check_nonsense": "?"})
