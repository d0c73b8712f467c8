"""The conformance kit's oracle checks (ldpbench/testing/checks/oracle.py) catch broken oracles (a
check that cannot fail is a defect), including tags that claim a missing method (issue 11)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from support import SMALL, GRRPerUserOnly, Leaky, Wasteful, run_check

from ldpbench.testing import check_oracle, oracle_checks
from ldpbench.types import OracleTags
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE

# -- broken oracles ----------------------------------------------------------------------------


class TypoQ(GRR):
    """Declares q* = 1/(e^eps + d) instead of 1/(e^eps + d - 1)."""

    name = "typo-q"

    @property
    def q_star(self):
        return 1 / (math.exp(self.epsilon) + self.d)


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
        run_check(TypoQ, "check_output_table_support")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run_check(TypoQ, "check_unbiased_aggregate")
    run_check(GRR, "check_output_table_support")
    run_check(GRR, "check_unbiased_aggregate")


def test_privacy_audit_catches_leaks_and_waste():
    with pytest.raises(AssertionError, match="not epsilon-LDP"):
        run_check(Leaky, "check_output_table_ldp")
    with pytest.raises(AssertionError, match="not attained"):
        run_check(Wasteful, "check_output_table_ldp")
    run_check(GRR, "check_output_table_ldp")


def test_global_random_state_is_caught():
    with pytest.raises(AssertionError, match="global random state"):
        run_check(GlobalOUE, "check_no_global_random_state")
    with pytest.raises(AssertionError, match="same seed"):
        run_check(GlobalOUE, "check_reproducible")
    run_check(OUE, "check_no_global_random_state")


def test_missing_f_term_fails_the_formula_and_the_simulation():
    with pytest.raises(AssertionError, match="V-exact"):
        run_check(NoFTerm, "check_constants")
    with pytest.raises(AssertionError, match="variance ratio"):
        run_check(NoFTerm, "check_variance_aggregate", epsilons=(4.0,))
    run_check(OUE, "check_variance_aggregate", epsilons=(4.0,))


def test_per_user_sampler_bug_is_caught():
    with pytest.raises(AssertionError, match="exact distribution"):
        run_check(BiasedPerUser, "check_perturb_follows_output_table")
    with pytest.raises(AssertionError, match="exact distribution"):
        run_check(BiasedPerUser, "check_exact_law_per_user")


def test_checks_accept_names_parameters_and_instances():
    names = [name for name, _ in oracle_checks(("olh", {"g": 3}), **SMALL)]
    assert names[0] == "check_constants" and "check_variance_per_user" in names
    run_check(GRR(d=4, epsilon=1.0), "check_constants")
    with pytest.raises(TypeError):
        list(oracle_checks("norm-sub"))
    with pytest.raises(ValueError, match="no oracle"):
        list(oracle_checks("no-such-oracle"))


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
    run_check(apple(), "check_output_table_moments")
    run_check(apple(), "check_declared_mean_aggregate")
    run_check(apple(), "check_constants")
    run_check(apple(), "check_tags")
    with pytest.raises(AssertionError, match="expected_estimate\\(f\\) differs from the table"):
        run_check(apple(ForgetsItsBias), "check_output_table_moments")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run_check(apple(ForgetsItsBias), "check_declared_mean_aggregate")


def test_a_biased_oracle_claiming_to_be_unbiased_fails():
    with pytest.raises(AssertionError, match="expected_estimate\\(f\\) is not f"):
        run_check(apple(ClaimsUnbiased), "check_tags")
    with pytest.raises(AssertionError, match="P\\(v in Support"):
        run_check(apple(ClaimsUnbiased), "check_output_table_support")
    with pytest.raises(AssertionError, match="unbiasedness"):
        run_check(apple(ClaimsUnbiased), "check_unbiased_aggregate")


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
        run_check(NoMean, "check_tags")


def test_the_kit_catches_tags_that_claim_a_missing_method():
    class ClaimsATable(GRRPerUserOnly):
        name = "claims-a-table"

        def tags(self) -> OracleTags:
            return dataclasses.replace(super().tags(), aggregate=True)

    with pytest.raises(AssertionError, match="check_tags failed.*aggregate without the methods"):
        check_oracle(ClaimsATable, **SMALL)


def test_the_kit_checks_a_declared_support_matrix_against_support_counts():
    class WrongMatrix(GRR):
        name = "wrong-matrix"

        def support_matrix(self, reports):
            return np.zeros((np.asarray(reports).size, self.d), dtype=bool)

    class RightMatrix(GRR):
        name = "right-matrix"

        def support_matrix(self, reports):
            return np.asarray(reports)[:, None] == np.arange(self.d)[None, :]

    from ldpbench.testing import oracle_checks

    dict(oracle_checks(RightMatrix, **SMALL))["check_tags"]()
    with pytest.raises(AssertionError, match="support_matrix"):
        dict(oracle_checks(WrongMatrix, **SMALL))["check_tags"]()


class SortingGRR(GRR):
    """Sorts the users' items in place before perturbing them (writes into its input)."""

    name = "sorting-grr"

    def perturb(self, values, rng):
        values.sort()
        return super().perturb(values, rng)


def test_an_oracle_sorting_its_input_in_place_fails_the_kit():
    # Passed at default settings before: perturb's input was a fresh writable array.
    for check in ("check_perturb_follows_output_table", "check_chunks", "check_reproducible"):
        with pytest.raises(ValueError, match="read-only"):
            run_check(SortingGRR, check)


class NaNVariance(GRR):
    name = "nan-variance"

    def variance(self, n, f):
        out = super().variance(n, f)
        out[0] = np.nan
        return out


def test_kit_messages_name_nan_and_print_both_numbers():
    with pytest.raises(
        AssertionError, match=r"differs from \(V-exact\).*got \[ *nan .*\(it holds 1 NaN\), expected \["
    ):
        run_check(NaNVariance, "check_constants")

    class WrongNoise(GRR):
        name = "wrong-noise"

        def noise_variance(self, n):
            return 2 * super().noise_variance(n)

    with pytest.raises(AssertionError, match=r"noise_variance != \(V-approx\): got [0-9.e-]+, expected [0-9.e-]+"):
        run_check(WrongNoise, "check_constants")
