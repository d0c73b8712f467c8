"""Every budget, written or computed, lies in [MIN_EPSILON, MAX_EPSILON] or is inf written as such.

Reproductions (issue 10): a personalized budget of '1000', 200*ln(d) or ln(1e400) got past the
cap that 'epsilons: [1000]' meets, and 'epsilons: [1e-300]' was accepted.
"""

from __future__ import annotations

import math

import pytest

from ldpbench.spec.budgets import MAX_EPSILON, MIN_EPSILON, depends_on_d, parse_epsilon


@pytest.mark.parametrize(
    ("value", "d", "what"),
    [
        ("1000", 10, "above the largest budget"),
        (1000, 10, "above the largest budget"),
        ("200*ln(d)", 1024, "above the largest budget"),
        ("ln(1e400)", 10, "not finite"),
        ("1e400*ln(2)", 10, "not finite"),
        (1e-300, 10, "below the smallest budget"),
        ("1e-300", 10, "below the smallest budget"),
        ("0.00001*ln(d)", 10, "below the smallest budget"),
        ("ln(d)", 1, "positive"),
    ],
)
def test_budgets_out_of_range_are_refused(value, d, what):
    with pytest.raises(ValueError, match=what):
        parse_epsilon(value, d)


def test_the_bounds_themselves_and_written_infinity_are_accepted():
    assert parse_epsilon(MAX_EPSILON, 2) == MAX_EPSILON
    assert parse_epsilon(MIN_EPSILON, 2) == MIN_EPSILON
    assert parse_epsilon("inf", 2) == math.inf and parse_epsilon(math.inf, 2) == math.inf
    # Checked for form only until d is known (the validator evaluates it per dataset).
    assert parse_epsilon("200*ln(d)", 2, check_range=False) == pytest.approx(200 * math.log(2))


def test_depends_on_d():
    assert depends_on_d("ln(d)") and depends_on_d(" 2 * LN( d )") and depends_on_d("ln(d)*3")
    assert not depends_on_d("ln(400)") and not depends_on_d(2) and not depends_on_d("d")
