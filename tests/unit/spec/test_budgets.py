"""Budget expressions of personalized-budget specs (ldpbench.spec.budgets.parse_epsilon)."""

from __future__ import annotations

import math

import pytest

from ldpbench.spec.budgets import parse_epsilon


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


@pytest.mark.parametrize("text", ["-inf", "-infinity", "nan", "info", "1e999", ""])
def test_not_infinity_for_a_budget(text):
    from ldpbench.params import parse_infinity

    assert parse_infinity(text) is None


def test_a_float_parameter_reads_both_infinities():
    from ldpbench.params import Param, parse_infinity, resolve

    assert parse_infinity("-inf", negative=True) == -math.inf
    params = (Param("x", float, 0.0, "a number"),)
    assert resolve(params, {"x": "-inf"}, owner="t").values["x"] == -math.inf
    assert resolve(params, {"x": "infinity"}, owner="t").values["x"] == math.inf
