"""How a plugin's parameters read infinity (ldpbench/params.py)."""

from __future__ import annotations

import math

import pytest


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
