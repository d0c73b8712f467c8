"""The conformance kit catches broken plugins (a check that cannot fail is a defect).

Each broken plugin below has one realistic bug; the test asserts that the named check fails with a
readable message, and that the correct built-in passes the same check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.testing import CheckSkipped, check_oracle, check_postprocessor, oracle_checks, postprocessor_checks
from ldpbench.types import Estimate, PostProcessor
from ldpbench_plugins.oracles._common import independent_binomials
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE

SMALL = dict(d=8, epsilons=(1.0, 4.0), n=2000, trials=120, law_samples=3000)


def run(obj, check, **kw):
    return dict(oracle_checks(obj, **{**SMALL, **kw}))[check]()


# -- broken oracles ----------------------------------------------------------------------------


class TypoQ(GRR):
    """Declares q* = 1/(e^eps + d) instead of 1/(e^eps + d - 1)."""

    name = "typo-q"

    @property
    def q_star(self):
        return 1 / (math.exp(self.epsilon) + self.d)


class Leaky(GRR):
    """Spends 1.5 epsilon: keeps the true value more often than its budget allows."""

    name = "leaky"

    def __init__(self, d, epsilon, **params):
        super().__init__(d, 1.5 * epsilon, **params)
        self.epsilon = epsilon


class Wasteful(GRR):
    """Spends only epsilon / 2 while declaring epsilon (valid LDP, but the bound is not attained)."""

    name = "wasteful"

    def __init__(self, d, epsilon, **params):
        super().__init__(d, epsilon / 2, **params)
        self.epsilon = epsilon


class IndependentGRR(GRR):
    """The tempting wrong shortcut: independent binomials per value. Right marginals, wrong joint law."""

    name = "independent-grr"

    def sample_report_histogram(self, true_counts, rng):
        return independent_binomials(np.asarray(true_counts), self.p_star, self.q_star, rng)


class GlobalOUE(OUE):
    """Draws the aggregate from numpy's global random state."""

    name = "global-oue"

    def sample_support_counts(self, true_counts, rng):
        n = int(np.sum(true_counts))
        return np.random.binomial(true_counts, 0.5) + np.random.binomial(n - true_counts, self.q_star)


class NoFTerm(OUE):
    """A variance formula without the f_v term."""

    name = "no-f-term"

    def variance(self, n, f):
        return np.full(np.shape(f), self.noise_variance(n))


class BiasedPerUser(GRR):
    """Per-user path reports a shifted value when it should report the truth (a sampler bug)."""

    name = "biased-per-user"

    def perturb(self, values, rng):
        y = super().perturb(values, rng)
        return np.where(y == 0, 1, y)


def test_typo_in_q_star_fails_the_table_and_the_z_test():
    with pytest.raises(AssertionError, match="P\\(v in Support \\| v'\\)"):
        run(TypoQ, "check_output_table_support")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run(TypoQ, "check_unbiased_aggregate")
    run(GRR, "check_output_table_support")
    run(GRR, "check_unbiased_aggregate")


def test_privacy_audit_catches_leaks_and_waste():
    with pytest.raises(AssertionError, match="not epsilon-LDP"):
        run(Leaky, "check_output_table_ldp")
    with pytest.raises(AssertionError, match="not attained"):
        run(Wasteful, "check_output_table_ldp")
    run(GRR, "check_output_table_ldp")


@pytest.mark.slow
def test_exact_law_catches_the_independent_binomial_shortcut():
    # Marginals are right, so unbiasedness and the variance formula pass ...
    run(IndependentGRR, "check_unbiased_aggregate")
    # ... but the joint law is not GRR's (the histogram no longer sums to n).
    with pytest.raises(AssertionError, match="exact distribution"):
        run(IndependentGRR, "check_exact_law_aggregate")
    run(GRR, "check_exact_law_aggregate")


def test_global_random_state_is_caught():
    with pytest.raises(AssertionError, match="global random state"):
        run(GlobalOUE, "check_no_global_random_state")
    with pytest.raises(AssertionError, match="same seed"):
        run(GlobalOUE, "check_reproducible")
    run(OUE, "check_no_global_random_state")


def test_missing_f_term_fails_the_formula_and_the_simulation():
    with pytest.raises(AssertionError, match="V-exact"):
        run(NoFTerm, "check_constants")
    with pytest.raises(AssertionError, match="variance ratio"):
        run(NoFTerm, "check_variance_aggregate", epsilons=(4.0,))
    run(OUE, "check_variance_aggregate", epsilons=(4.0,))


def test_per_user_sampler_bug_is_caught():
    with pytest.raises(AssertionError, match="exact distribution"):
        run(BiasedPerUser, "check_perturb_follows_output_table")
    with pytest.raises(AssertionError, match="exact distribution"):
        run(BiasedPerUser, "check_exact_law_per_user")


@pytest.mark.slow
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


def test_checks_accept_names_parameters_and_instances():
    names = [name for name, _ in oracle_checks(("olh", {"g": 3}), **SMALL)]
    assert names[0] == "check_constants" and "check_variance_per_user" in names
    run(GRR(d=4, epsilon=1.0), "check_constants")
    with pytest.raises(TypeError):
        list(oracle_checks("norm-sub"))
    with pytest.raises(ValueError, match="no oracle"):
        list(oracle_checks("no-such-oracle"))


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


# -- a biased oracle declares its bias, and the kit tests the declaration -----------------------

from ldpbench_plugins.oracles.cms import CMS  # noqa: E402

APPLE = dict(estimator="apple", m=4, k=3)


def apple(cls=CMS):
    """Apple's CMS with a small fixed family (the kit rebuilds it at each d and epsilon with these
    parameters)."""
    return cls(d=8, epsilon=1.0, **APPLE)


class ForgetsItsBias(CMS):
    """Declares itself biased but gives the unbiased mean (a forgotten override)."""

    name = "forgets-its-bias"

    def expected_estimate(self, f):
        return np.array(f, dtype=float)


class ClaimsUnbiased(CMS):
    """Apple's fixed family declared unbiased: the lie the tag exists to prevent."""

    name = "claims-unbiased"

    def tags(self):
        import dataclasses

        return dataclasses.replace(super().tags(), unbiased=True)


def test_a_declared_bias_is_tested_against_the_table_and_the_simulations():
    run(apple(), "check_output_table_moments")
    run(apple(), "check_declared_mean_aggregate")
    run(apple(), "check_constants")
    run(apple(), "check_tags")
    with pytest.raises(AssertionError, match="expected_estimate\\(f\\) differs from the table"):
        run(apple(ForgetsItsBias), "check_output_table_moments")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run(apple(ForgetsItsBias), "check_declared_mean_aggregate")


def test_a_biased_oracle_claiming_to_be_unbiased_fails():
    with pytest.raises(AssertionError, match="expected_estimate\\(f\\) is not f"):
        run(apple(ClaimsUnbiased), "check_tags")
    with pytest.raises(AssertionError, match="P\\(v in Support"):
        run(apple(ClaimsUnbiased), "check_output_table_support")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run(apple(ClaimsUnbiased), "check_unbiased_aggregate")


def test_tags_choose_the_mean_checks():
    from ldpbench.testing.checks.runner import _applies  # what pytest collects

    biased = {name for name, check in oracle_checks(apple(), **SMALL) if _applies(check)}
    unbiased = {name for name, check in oracle_checks(GRR, **SMALL) if _applies(check)}
    assert {"check_declared_mean_aggregate", "check_output_table_moments"} <= biased
    assert not {"check_unbiased_aggregate", "check_unbiased_per_user", "check_output_table_support"} & biased
    assert {"check_unbiased_aggregate", "check_output_table_support"} <= unbiased
    assert not {"check_declared_mean_aggregate", "check_output_table_moments"} & unbiased


def test_a_biased_tag_without_its_mean_is_refused():
    class NoMean(GRR):
        name = "no-mean"

        def tags(self):
            import dataclasses

            return dataclasses.replace(super().tags(), unbiased=False)

    with pytest.raises(AssertionError, match="unbiased=False without the methods"):
        run(NoMean, "check_tags")
