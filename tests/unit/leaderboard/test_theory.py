"""Measurement beside theory (ldpbench/leaderboard/theory.py): a row is flagged only when its mean
is both far from its expected value (ratio beyond FAR) and beyond the noise (FAR_SIGMAS standard
errors)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ldpbench.leaderboard.theory import FAR, FAR_SIGMAS, far_from_theory, theory_warnings


def test_far_and_beyond_the_noise_is_flagged_in_both_directions():
    assert far_from_theory(2.0, 0.01, 1.0)
    assert far_from_theory(0.5, 0.01, 1.0)


def test_far_within_the_noise_or_near_beyond_it_is_not():
    assert not far_from_theory(2.0, 1.0 / FAR_SIGMAS + 0.01, 1.0)  # 4 SE would cover the gap
    assert not far_from_theory(FAR * 0.99, 1e-9, 1.0)  # significant, but not far
    assert far_from_theory(FAR * 1.01, 1e-9, 1.0)


@pytest.mark.parametrize(
    ("mean", "stderr", "theory"),
    [(math.nan, 0.0, 1.0), (2.0, 0.0, math.nan), (2.0, 0.0, 0.0), (2.0, 0.0, -1.0), (math.inf, 0.0, 1.0)],
)
def test_no_verdict_without_finite_numbers_and_a_positive_theory(mean, stderr, theory):
    assert not far_from_theory(mean, stderr, theory)


def test_one_stderr_that_is_not_finite_counts_as_no_noise():
    assert far_from_theory(2.0, math.nan, 1.0)


def test_the_warnings_name_the_far_rows_only():
    lb = pl.DataFrame(
        {
            "dataset": ["zipf", "zipf", "zipf"],
            "epsilon": [1.0, 1.0, 1.0],
            "oracle": ["grr", "oue", "olh"],
            "pipeline": ["base", "base", "norm-sub"],
            "metric": ["mse", "mse", "mse"],
            "mean": [3.0e-4, 1.02e-4, 5.0e-4],
            "stderr": [1e-6, 1e-6, 1e-6],
            "theory": [1.0e-4, 1.0e-4, None],
        }
    )
    (line,) = theory_warnings(lb)
    assert line.startswith("zipf ") and "grr · base · mse" in line
    assert "measured 0.0003 = 3 x theory 0.0001" in line
