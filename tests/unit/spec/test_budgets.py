"""Budgets (ldpbench.spec.budgets): the expressions of personalized-budget specs, and their bounds.

Every budget, written or computed, lies in [MIN_EPSILON, MAX_EPSILON] or is inf written as such.
Reproductions (issue 10): a personalized budget of '1000', 200*ln(d) or ln(1e400) got past the
cap that 'epsilons: [1000]' meets, and 'epsilons: [1e-300]' was accepted.
"""

from __future__ import annotations

import math

import pytest

from ldpbench.spec.budgets import MAX_EPSILON, MIN_EPSILON, depends_on_d, parse_epsilon


@pytest.mark.parametrize(
    ("value", "d", "expected"),
    [
        (0.1, 10, 0.1),
        (2, 10, 2.0),
        ("0.5", 10, 0.5),
        ("1e-1", 10, 0.1),
        (".25", 10, 0.25),
        ("inf", 10, math.inf),
        ("Infinity", 10, math.inf),
        ("+inf", 10, math.inf),
        (math.inf, 10, math.inf),
        ("ln(d)", 400, math.log(400)),
        ("LN(d)", 281, math.log(281)),
        (" ln( d ) ", 224, math.log(224)),
        ("2*ln(d)", 224, 2 * math.log(224)),
        ("0.5 * ln(d)", 224, 0.5 * math.log(224)),
        ("ln(d)*3", 16, 3 * math.log(16)),
        ("ln(400)", 7, math.log(400)),
        ("1.5*ln(2.5)", 7, 1.5 * math.log(2.5)),
    ],
)
def test_parse_epsilon_accepts_the_grammar(value, d, expected):
    assert parse_epsilon(value, d) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "value",
    [
        "ln(n)",
        "log(d)",
        "exp(1)",
        "ln(d) + 1",
        "2**3",
        "__import__('os')",
        "d",
        "",
        "ln()",
        "-1",
        "ln(-2)",
        "nan",
        None,
        True,
        [1],
    ],
)
def test_parse_epsilon_rejects_everything_else(value):
    with pytest.raises(ValueError):
        parse_epsilon(value, 10)


@pytest.mark.parametrize("value", [0, -0.5, "0", "ln(1)", "0*ln(d)", math.nan])
def test_parse_epsilon_rejects_non_positive_budgets(value):
    with pytest.raises(ValueError, match="positive"):
        parse_epsilon(value, 10)


def test_ln_d_of_a_one_item_domain_is_not_a_budget():
    with pytest.raises(ValueError):
        parse_epsilon("ln(d)", 1)


def test_error_message_names_the_value_and_the_grammar():
    with pytest.raises(ValueError) as info:
        parse_epsilon("log(d)", 10)
    assert "log(d)" in str(info.value) and "ln(d)" in str(info.value)


@pytest.mark.parametrize("text", ["inf", "+inf", " Inf ", "infinity", "+INFINITY"])
def test_one_reader_of_infinity(text):
    from ldpbench.params import parse_infinity

    assert parse_infinity(text) == math.inf
    assert parse_epsilon(text, 4) == math.inf


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
