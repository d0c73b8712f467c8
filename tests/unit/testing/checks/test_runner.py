"""check-plugin and the pytest kit run the same checks (issue 29, trial shortfall 4).

``parametrize_with_checks`` collects only the checks an oracle's tags make applicable; run
directly (``ldpbench check-plugin``, ``check_oracle``) the others must say "not applicable"
(:class:`CheckSkipped`) before running, never "passed" and never "FAILED": on an unbiased oracle
the checks of a declared bias used to pass (and fail again on a broken estimator, so check-plugin
counted 7 failures where pytest counted 4)."""

from __future__ import annotations

import pytest
from support import SMALL

from ldpbench.testing import CheckSkipped, oracle_checks, parametrize_with_checks
from ldpbench_plugins.oracles.cms import CMS
from ldpbench_plugins.oracles.grr import GRR

from .test_oracle import APPLE

BIASED_ONLY = {"check_output_table_moments", "check_declared_mean_aggregate", "check_declared_mean_per_user"}
UNBIASED_ONLY = {"check_output_table_support", "check_unbiased_aggregate", "check_unbiased_per_user"}


class WrongP(GRR):
    """Break B of the trial: the estimator's p* is 0.01 too large (perturb unchanged)."""

    name = "wrong-p"

    @property
    def p_star(self):
        return super().p_star + 0.01


def _collected(oracle) -> set[str]:
    mark = parametrize_with_checks([oracle], **SMALL)
    return {p.id.rsplit("-", 1)[1] for p in mark.args[1]}


def _not_applicable(oracle) -> set[str]:
    """Every check that, called directly, raises CheckSkipped at once (run only those: the
    applicable ones are what the pytest kit runs)."""
    collected = _collected(oracle)
    out = set()
    for name, check in oracle_checks(oracle, **SMALL):
        if name in collected:
            continue
        with pytest.raises(CheckSkipped, match="does not apply to .*: it needs"):
            check()
        out.add(name)
    return out


@pytest.mark.parametrize("oracle", [GRR, WrongP], ids=["grr", "broken-p"])
def test_the_biased_checks_are_not_applicable_to_an_unbiased_oracle(oracle):
    collected = _collected(oracle)
    skipped = _not_applicable(oracle)
    names = {name for name, _ in oracle_checks(oracle, **SMALL)}
    assert collected | skipped == names and not collected & skipped
    assert BIASED_ONLY <= skipped and not UNBIASED_ONLY & skipped
    assert "check_channel" not in skipped  # GRR has a finite channel: it is checked


def test_the_unbiased_checks_are_not_applicable_to_a_biased_oracle():
    apple = CMS(d=8, epsilon=1.0, **APPLE)
    skipped = _not_applicable(apple)
    assert UNBIASED_ONLY <= skipped and not BIASED_ONLY & skipped


def test_the_reason_names_the_missing_tag():
    check = dict(oracle_checks(GRR, **SMALL))["check_declared_mean_aggregate"]
    with pytest.raises(CheckSkipped, match=r"tags\(\)\.unbiased = False"):
        check()
