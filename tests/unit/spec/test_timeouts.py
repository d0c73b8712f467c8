"""``cell_timeout`` (ldpbench/spec/timeouts.py): seconds in (0, MAX_CELL_TIMEOUT], or null for none."""

from __future__ import annotations

import math

import pytest

from ldpbench.spec.timeouts import MAX_CELL_TIMEOUT, cell_timeout_problem


@pytest.mark.parametrize("value", [None, 1, 0.5, 3600, MAX_CELL_TIMEOUT])
def test_a_number_of_seconds_or_null_is_a_timeout(value):
    assert cell_timeout_problem(value) is None


@pytest.mark.parametrize("value", [True, "60", [60], math.nan, math.inf])
def test_what_is_not_a_number_of_seconds_is_refused(value):
    assert cell_timeout_problem(value) == f"'cell_timeout' must be a number of seconds, got {value!r}"


@pytest.mark.parametrize("value", [0, -1, MAX_CELL_TIMEOUT + 1])
def test_a_timeout_out_of_range_says_the_range(value):
    problem = cell_timeout_problem(value)
    assert problem is not None and "more than 0 and at most 604800 seconds" in problem and repr(value) in problem
